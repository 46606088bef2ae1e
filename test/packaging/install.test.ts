/**
 * The package as a user gets it. The project is packed (its real `prepack` build,
 * in a copy of the checkout so the compiled code the other tests run is left alone), the
 * tarball is installed into an empty temporary project that cannot see the checkout, and
 * the installed server is driven with the AWS SDK: first as the README starts it
 * (`npx redrive serve`), then as the Dockerfile does (its CMD and HEALTHCHECK, run here
 * outside a container). The install really runs: npm resolves every dependency and, on a
 * Node without Node-API 10 (Node 20), builds better-sqlite3 12 for it (about 90 s here,
 * where no prebuilt binary can be downloaded); on a Node with it (22.14+, 24), the user
 * denies that script and the prebuilt better-sqlite3 13 must serve alone, with no compiler.
 * `.ci/run` proves the install on each Node it tests.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { sqsClient } from '../support/server-process.js';
import { libraryTests } from './library.js';
import { run, serve, stopJob } from './process-group.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** Node 22.14+ and 24 run the prebuilt better-sqlite3 13; Node 20 builds 12 (src/stores/sqlite/driver.ts). */
const PREBUILT = Number(process.versions.napi) >= 10;
const PKG = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string };

/** The Dockerfile's exec-form instruction `name` (CMD, or HEALTHCHECK's CMD), as an argv. */
function dockerfileArgv(name: 'CMD' | 'HEALTHCHECK'): string[] {
  const text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ');
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  assert.ok(line, `Dockerfile has a ${name}`);
  return JSON.parse(/CMD (\[.*\])\s*$/.exec(line)![1]!) as string[];
}

describe('the packed package, installed from its tarball', { timeout: 15 * 60_000 }, () => {
  let work: string;
  let app: string;
  let tarball: string;
  let files: string[];

  before(() => {
    work = realpathSync(mkdtempSync(join(tmpdir(), 'redrive-pack-')));
    // A copy of the checkout to pack: `prepack` rebuilds dist/src there, not under the
    // compiled code the tests running beside this one import.
    const stage = join(work, 'stage');
    const skip = new Set(['.git', 'node_modules', 'dist', 'data']);
    cpSync(ROOT, stage, {
      recursive: true,
      filter: (src) => src === ROOT || !skip.has(src.slice(ROOT.length).split('/')[0]!),
    });
    symlinkSync(join(ROOT, 'node_modules'), join(stage, 'node_modules'), 'dir');
    const packed = performance.now();
    run('npm', ['pack', '--pack-destination', work], { cwd: stage });
    console.log(`# npm pack (with its tsc build): ${((performance.now() - packed) / 1000).toFixed(1)} s`);
    tarball = join(work, `${PKG.name}-${PKG.version}.tgz`);
    files = run('tar', ['-tzf', tarball], { cwd: work })
      .split('\n')
      .filter(Boolean)
      .map((f) => f.replace(/^package\//, ''));
    rmSync(stage, { recursive: true, force: true });

    // The user's project: empty but for the allowScripts entry the README tells users to
    // add (approving better-sqlite3 12's build on Node 20, denying it where 13's prebuilt
    // binary serves). --strict-allow-scripts makes npm fail rather than warn on any other
    // dependency with install scripts, as future npm versions will by default.
    app = join(work, 'app');
    mkdirSync(app);
    writeFileSync(
      join(app, 'package.json'),
      JSON.stringify({ name: 'redrive-user', private: true, allowScripts: { 'better-sqlite3': !PREBUILT } }),
    );
    const installed = performance.now();
    // With the SQS SDK a user's tests drive the library with (library.ts), from npm's cache.
    const sdk = `@aws-sdk/client-sqs@${JSON.parse(readFileSync(join(ROOT, 'node_modules/@aws-sdk/client-sqs/package.json'), 'utf8')).version}`;
    run('npm', ['install', '--strict-allow-scripts', '--prefer-offline', '--no-audit', '--no-fund', tarball, sdk], {
      cwd: app,
    });
    console.log(
      `# npm install of the tarball on ${process.version} (${PREBUILT ? 'prebuilt better-sqlite3 13, nothing compiled' : 'better-sqlite3 12 built'}): ${((performance.now() - installed) / 1000).toFixed(1)} s`,
    );
  });

  after(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('ships the compiled server, its console assets and migrations, and no tests, benchmarks or sources', () => {
    for (const needed of [
      'package.json',
      'README.md',
      'CHANGELOG.md',
      'LICENSE',
      'dist/src/cli/index.js',
      'dist/src/server/app.js',
      'dist/src/index.js',
      'dist/src/index.d.ts',
      'dist/src/index.cjs',
      'dist/src/index.d.cts',
      'dist/src/library/start-redrive.d.ts',
      'src/stores/sqlite/migrations/000001.sql',
      'src/stores/postgres/migrations/000001.sql',
      'dist/src/stores/sqlite/checkpoint-worker.js',
      'dist/src/protocols/query/sqs-query-model.json',
      'dist/src/console/browser/main.js',
      'src/console/static/console.css',
      'src/console/static/favicon.svg',
    ])
      assert.ok(files.includes(needed), `${needed} is in the package`);
    const unwanted = files.filter((f) =>
      /^(test|bench|docs|scripts|dist\/test|dist\/bench)\/|(?<!\.d)\.ts$|\.map$|tsconfig/.test(f),
    );
    assert.deepEqual(unwanted, []);
    const other = files.filter(
      (f) =>
        !/^(dist\/src\/.*\.(js|cjs|d\.ts|d\.cts|json)|src\/console\/static\/[^/]+|src\/stores\/(sqlite|postgres)\/migrations\/\d{6}\.sql)$/.test(
          f,
        ),
    );
    assert.deepEqual(other.sort(), ['CHANGELOG.md', 'LICENSE', 'README.md', 'package.json']);
    for (const store of ['sqlite', 'postgres']) {
      const dir = `src/stores/${store}/migrations`;
      const steps = readdirSync(join(ROOT, dir))
        .filter((f) => f.endsWith('.sql'))
        .map((f) => `${dir}/${f}`)
        .sort();
      assert.deepEqual(
        files.filter((f) => f.startsWith(`${dir}/`)).sort(),
        steps,
        `every ${store} migration is in the package`,
      );
    }
  });

  test('installs without the checkout and without running the TypeScript compiler', () => {
    const pkg = realpathSync(join(app, 'node_modules', PKG.name));
    assert.ok(pkg.startsWith(app), `${pkg} is inside the user's project`);
    assert.ok(!existsSync(join(app, 'node_modules', 'typescript')), 'typescript is not installed');
    const built = existsSync(join(app, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node'));
    assert.equal(
      built,
      !PREBUILT,
      PREBUILT ? 'better-sqlite3 12 was not built (its script denied)' : 'better-sqlite3 12 was built',
    );
    assert.ok(existsSync(join(app, 'node_modules/better-sqlite3-napi/package.json')), 'better-sqlite3 13 is installed');
    const help = run('npx', ['redrive', '--help'], { cwd: app });
    assert.match(help, /^Usage: redrive /m);
    assert.match(help, /\bserve\b.*Run the Redrive server/);
  });

  test('`npx redrive serve` serves SQS clients durably and exits cleanly on SIGTERM', async () => {
    const dataDir = join(app, 'data');
    // The README's start command; --port 0 so parallel test runs never collide.
    const server = await serve('npx', ['redrive', 'serve', '--port', '0', '--data-dir', dataDir], app);
    console.log(`# npx redrive serve: listening after ${server.startMs.toFixed(0)} ms`);
    const sqs = sqsClient(server.url);
    try {
      const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'installed' }));
      await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'first' }));
      await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'kept' }));
      const got = await sqs.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 1, VisibilityTimeout: 0 }));
      assert.equal(got.Messages?.[0]?.Body, 'first');
      await sqs.send(new DeleteMessageCommand({ QueueUrl, ReceiptHandle: got.Messages![0]!.ReceiptHandle }));
    } finally {
      sqs.destroy();
    }
    // npx (npm exec) runs the server under `sh -c` and does not pass SIGTERM on: the signal
    // must reach the group, as Ctrl-C or systemd's default KillMode sends it. npm itself then
    // ends by the signal; the server drains, says so and exits.
    await stopJob(server, 'group');
    assert.match(server.output(), /"msg":"shutting down"[\s\S]*"msg":"stopped"/);
    assert.ok(existsSync(join(dataDir, 'redrive.db')), 'the SQLite database is in --data-dir');
  });

  libraryTests(() => app);

  test("the Dockerfile's CMD and HEALTHCHECK, outside a container: the data survived, assets load, SIGTERM ends it", async () => {
    // The image's paths mapped onto this install; the port and the loopback host are the
    // only changes (this machine runs other servers, and tests listen on loopback only).
    const dataDir = join(app, 'data');
    const [command, ...args] = dockerfileArgv('CMD').map((a) =>
      a.replace(/^\/opt\/redrive\b/, app).replace(/^\/data$/, dataDir),
    );
    const server = await serve(command!, [...args, '--port', '0', '--host', '127.0.0.1'], app);
    const port = new URL(server.url).port;
    const health = dockerfileArgv('HEALTHCHECK').map((a) => a.replace('127.0.0.1:9324', `127.0.0.1:${port}`));
    const sqs = sqsClient(server.url);
    try {
      assert.equal(spawnSync(health[0]!, health.slice(1), { stdio: 'ignore' }).status, 0, 'the health check passes');
      for (const asset of [
        '/console/assets/console.css',
        '/console/assets/favicon.svg',
        '/console/assets/js/main.js',
      ]) {
        const res = await fetch(`${server.url}${asset}`);
        assert.equal(res.status, 200, `${asset} is served from the installed package`);
        assert.ok((await res.text()).length > 0);
      }
      const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'installed' }));
      const got = await sqs.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10 }));
      assert.deepEqual(
        got.Messages?.map((m) => m.Body),
        ['kept'],
      );
      await sqs.send(new DeleteMessageCommand({ QueueUrl, ReceiptHandle: got.Messages![0]!.ReceiptHandle }));
    } finally {
      sqs.destroy();
    }
    // The CMD runs the server itself (PID 1 in a container): SIGTERM to it alone is enough.
    assert.deepEqual(await stopJob(server, 'process'), { code: 0, signal: null });
    assert.match(server.output(), /"msg":"stopped"/);
    assert.notEqual(
      spawnSync(health[0]!, health.slice(1), { stdio: 'ignore' }).status,
      0,
      'the health check fails once the server is gone',
    );
  });
});

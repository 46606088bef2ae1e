/**
 * Redrive as a library, as a user's project gets it from the packed tarball
 * (install.test.ts installs it, with @aws-sdk/client-sqs, into an empty project). The
 * node:test example of docs/library.md is run as written; a CommonJS `require` and the
 * TypeScript types (ESM and CommonJS) are checked too, and a deep import is refused.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { run, userEnv } from './process-group.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The first ```js block after the heading `## <heading>` of docs/library.md. */
export function docsExample(heading: string): string {
  const text = readFileSync(join(ROOT, 'docs/library.md'), 'utf8');
  const at = text.indexOf(`\n## ${heading}\n`);
  assert.ok(at >= 0, `docs/library.md has a "## ${heading}" section`);
  const block = /```js\n([\s\S]*?)```/.exec(text.slice(at));
  assert.ok(block, `docs/library.md's ${heading} section has a js example`);
  return block[1]!;
}

/** Runs `node args` in `cwd` as a user would; it must end by itself, with no handle left open. */
function nodeRun(args: string[], cwd: string) {
  const started = performance.now();
  // A handle left open keeps the process alive: the timeout then kills it, and the test fails.
  const r = spawnSync(process.execPath, args, { cwd, encoding: 'utf8', env: userEnv(), timeout: 60_000 });
  return { ...r, ms: performance.now() - started };
}

/** The library's tests, inside install.test.ts's describe; `app` is the user's project. */
export function libraryTests(app: () => string): void {
  test("docs/library.md's node:test example passes against the installed package and exits by itself", () => {
    const dir = join(app(), 'test');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'orders.test.mjs'), docsExample('node:test'));
    const r = nodeRun(['--test', 'test/orders.test.mjs'], app());
    console.log(`# node --test with startRedrive(): exited ${r.status} after ${r.ms.toFixed(0)} ms`);
    assert.equal(r.signal, null, `killed (a handle left open?):\n${r.stdout}\n${r.stderr}`);
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    // TAP (`# pass 1`) or, under a parent test runner, the spec reporter (`ℹ pass 1`).
    assert.match(r.stdout, /^(?:# |ℹ )pass 1\b/m);
  });

  test('require() starts it too, and a deep import is refused (the exports map)', () => {
    const script = [
      "const { startRedrive } = require('redrive');",
      '(async () => {',
      '  const r = await startRedrive({ storage: "sqlite" });',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the example's own template literal, written as text.
      '  const res = await fetch(`${r.endpoint}/health`);',
      '  console.log(res.status, r.region, r.accountId, r.sqsClientConfig.endpoint === r.endpoint);',
      '  await r.close();',
      '})();',
    ].join('\n');
    const r = nodeRun(['-e', script], app());
    assert.equal(r.signal, null, `killed (a handle left open?):\n${r.stderr}`);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), '200 us-east-1 000000000000 true');
    const deep = nodeRun(['--input-type=module', '-e', "await import('redrive/dist/src/server/app.js')"], app());
    assert.notEqual(deep.status, 0);
    assert.match(deep.stderr, /ERR_PACKAGE_PATH_NOT_EXPORTED/);
  });

  test('its TypeScript types resolve, for import and for require', () => {
    const project = app();
    writeFileSync(
      join(project, 'check.mts'),
      [
        "import { startRedrive, type RedriveOptions, type RunningRedrive } from 'redrive';",
        "const options: RedriveOptions = { storage: 'memory', config: { queues: [{ name: 'q', deadLetterQueue: { name: 'd', maxReceiveCount: 2 } }] } };",
        'const running: Promise<RunningRedrive> = startRedrive(options);',
        'export const endpoint: Promise<string> = running.then((r) => r.sqsClientConfig.endpoint);',
        '// @ts-expect-error: an option that does not exist',
        'startRedrive({ stroage: "memory" });',
      ].join('\n'),
    );
    writeFileSync(
      join(project, 'check.cts'),
      [
        "import redrive = require('redrive');",
        'export const closed: Promise<void> = redrive.startRedrive({ port: 0 }).then((r) => r.close());',
      ].join('\n'),
    );
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    run(
      process.execPath,
      [
        tsc,
        '--noEmit',
        '--strict',
        '--module',
        'nodenext',
        '--moduleResolution',
        'nodenext',
        '--skipLibCheck',
        '--types',
        'node',
        '--typeRoots',
        join(ROOT, 'node_modules/@types'),
        'check.mts',
        'check.cts',
      ],
      { cwd: project },
    );
  });
}

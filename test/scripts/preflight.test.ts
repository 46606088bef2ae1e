/**
 * `npm test` says what it needs. scripts/preflight.mjs runs as
 * `npm test` runs it, in a child process whose environment hides one requirement or all.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, test } from 'node:test';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CLOSED_PORT = 'postgres://postgres@127.0.0.1:1/postgres';
const NEEDS_BUILD = Number(process.versions.napi) < 10;
const empty = mkdtempSync(join(tmpdir(), 'redrive-preflight-'));
after(() => rmSync(empty, { recursive: true, force: true }));

interface Result {
  status: number | null;
  stderr: string;
  stdout: string;
}

/**
 * Runs `node <script>` from the checkout with `env` laid over this process's environment
 * (CI removed unless given). Killed, with its process group, after 30 s (or `killAfterMs`): a run-tests.mjs
 * whose preflight wrongly passed would otherwise start the whole suite.
 */
function node(script: string, env: NodeJS.ProcessEnv, killAfterMs = 30_000): Promise<Result> {
  const base = { ...process.env };
  delete base.CI;
  const child = spawn(process.execPath, [script], { cwd: ROOT, env: { ...base, ...env }, detached: true });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), killAfterMs);
  return new Promise((resolve) =>
    child.once('exit', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    }),
  );
}

const lines = (r: Result) => r.stderr.split('\n').filter(Boolean);

describe('the test preflight', () => {
  test('with every requirement missing, one line each says what needs it and how to get it, and it fails', async () => {
    const r = await node('scripts/preflight.mjs', {
      CI: 'true',
      PATH: empty, // no g++, no make, no promtool
      REDRIVE_TEST_POSTGRES_URL: CLOSED_PORT,
      REDRIVE_TEST_AWS_CLI: join(empty, 'aws'),
      REDRIVE_TEST_PYTHON: join(empty, 'python3'),
      REDRIVE_TEST_CHROMIUM: join(empty, 'chromium'),
      REDRIVE_TEST_AMQP_URL: 'amqp://guest:guest@127.0.0.1:1',
    });
    assert.equal(r.status, 1);
    const needs = lines(r).filter((l) => l.startsWith('npm test needs '));
    const expected: [RegExp, RegExp][] = [
      [
        /^npm test needs PostgreSQL at postgres:\/\/postgres@127\.0\.0\.1:1\/postgres: connect ECONNREFUSED/,
        /REDRIVE_TEST_POSTGRES_URL/,
      ],
      [/^npm test needs AWS CLI at .*\/aws: not found/, /apt-get install awscli/],
      [/^npm test needs boto3 for .*\/python3: .*not found/, /apt-get install python3-boto3/],
      [/^npm test needs pika for .*\/python3: .*not found/, /apt-get install python3-pika/],
      [/^npm test needs Celery for .*\/python3: .*not found/, /apt-get install python3-celery/],
      [/^npm test needs Qpid Proton for .*\/python3: .*not found/, /apt-get install python3-qpid-proton/],
      [/^npm test needs promtool: not found/, /apt-get install prometheus/],
      [/^npm test needs Chromium at .*\/chromium: not found/, /apt-get install chromium/],
      // Only Node 20 builds better-sqlite3 12 (the packaging test); later Nodes compile nothing.
      ...(NEEDS_BUILD
        ? [
            [/^npm test needs C\+\+ build tools: g\+\+ and make not found/, /apt-get install g\+\+ make/] as [
              RegExp,
              RegExp,
            ],
          ]
        : []),
      [/^npm test needs RabbitMQ at amqp:\/\/guest:\*\*\*@127\.0\.0\.1:1: not reachable/, /CI=true requires it/],
    ];
    assert.equal(needs.length, expected.length, r.stderr);
    expected.forEach(([what, fix], i) => {
      assert.match(needs[i]!, what);
      assert.match(needs[i]!, fix);
    });
    assert.match(r.stderr, new RegExp(`${expected.length} requirements missing .*no test was run`));
  });

  test('only what is missing is named: a PostgreSQL port with nothing listening', async () => {
    const r = await node('scripts/preflight.mjs', { REDRIVE_TEST_POSTGRES_URL: CLOSED_PORT });
    assert.equal(r.status, 1);
    assert.deepEqual(
      lines(r)
        .filter((l) => l.startsWith('npm test needs '))
        .map((l) => l.split(':')[0]),
      ['npm test needs PostgreSQL at postgres'],
    );
  });

  test('RabbitMQ is required under CI only; elsewhere its absence is said, not hidden', async () => {
    const r = await node('scripts/preflight.mjs', { REDRIVE_TEST_AMQP_URL: 'amqp://127.0.0.1:1' });
    assert.equal(r.status, 0, r.stderr);
    assert.match(
      r.stderr,
      /^npm test: note: RabbitMQ at amqp:\/\/127\.0\.0\.1:1: not reachable.*differential\.test\.ts.*skipped \(CI=true fails instead\)\.$/m,
    );
  });

  test('off CI, a missing client that is not an npm package is said, and its tests skip; the run goes on', async () => {
    const r = await node('scripts/preflight.mjs', {
      REDRIVE_TEST_AWS_CLI: join(empty, 'aws'),
      REDRIVE_TEST_PYTHON: join(empty, 'python3'),
      REDRIVE_TEST_CHROMIUM: join(empty, 'chromium'),
    });
    assert.equal(r.status, 0, r.stderr);
    assert.match(
      r.stderr,
      /^npm test: note: Chromium at .*\/chromium: not found\..*apt-get install chromium.*; its tests are skipped/m,
    );
    assert.deepEqual(
      lines(r).filter((l) => l.startsWith('npm test needs ')),
      [],
    );
    assert.match(
      r.stderr,
      /^npm test: note: AWS CLI at .*\/aws: not found\..*apt-get install awscli.*; its tests are skipped \(CI=true fails instead\)\.$/m,
    );
    assert.match(
      r.stderr,
      /^npm test: note: boto3 for .*\/python3: .*not found\..*apt-get install python3-boto3.*; its tests are skipped/m,
    );
    assert.match(r.stderr, /^npm test: note: pika for .*\/python3: .*; its tests are skipped/m);
    assert.match(
      r.stderr,
      /^npm test: note: Qpid Proton for .*\/python3: .*not found\..*apt-get install python3-qpid-proton.*; its tests are skipped/m,
    );
  });

  test("without Debian's Chromium, the console tests drive the npm-shipped one, and the preflight says which", async () => {
    // REDRIVE_TEST_CHROMIUM=npm chooses as a machine without /usr/bin/chromium does. The
    // first use unpacks the browser (about 200 MB) and launches it once: up to a few minutes.
    const r = await node('scripts/preflight.mjs', { REDRIVE_TEST_CHROMIUM: 'npm' }, 5 * 60_000);
    assert.equal(r.status, 0, r.stderr);
    if (process.platform === 'linux' && process.arch === 'x64') {
      assert.match(
        r.stderr,
        /^npm test: note: the console's browser tests drive the npm-shipped Chromium \(@sparticuz\/chromium [\d.]+, unpacked in .*\)\.$/m,
      );
    } else {
      assert.match(
        r.stderr,
        /^npm test: note: the npm-shipped Chromium \(@sparticuz\/chromium\) is built for Linux x64 only.*; its tests are skipped/m,
      );
    }
  });

  test('npm test stops at the preflight, before any test runs', async () => {
    const r = await node('scripts/run-tests.mjs', { REDRIVE_TEST_POSTGRES_URL: CLOSED_PORT });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /^npm test needs PostgreSQL at /m);
    assert.doesNotMatch(r.stdout, /^# tests /m);
    assert.equal(r.stdout, '');
  });
});

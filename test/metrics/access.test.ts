/**
 * Who may scrape /metrics: anyone without --credentials; with --credentials, only with the
 * bearer token of --metrics-token-file, or on the separate --metrics-address; bad flags
 * stop the server with one line that names them.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { single } from './scrape.js';

const dir = mkdtempSync(join(tmpdir(), 'redrive-metrics-access-'));
const keys = join(dir, 'keys.json');
const tokenFile = join(dir, 'token');
writeFileSync(keys, JSON.stringify({ AKIDMETRICS: { secretAccessKey: 'metrics-secret', accountId: '111111111111' } }));
writeFileSync(tokenFile, 's3cret-scrape-token\n');
const started: ServerProcess[] = [];

after(async () => {
  for (const s of started) {
    await s.stop();
    s.cleanup();
  }
  rmSync(dir, { recursive: true, force: true });
});

async function serve(args: string[]): Promise<ServerProcess> {
  const s = await startServerProcess({ storage: 'memory', args });
  started.push(s);
  return s;
}

const scrape = (url: string, token?: string) =>
  fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {} });

test('without --credentials, /metrics is open on the main port', async () => {
  const s = await serve([]);
  assert.match(s.output(), new RegExp(`"metrics":"${s.url}/metrics"`));
  const res = await scrape(`${s.url}/metrics`);
  assert.equal(res.status, 200);
  assert.match(await res.text(), /# TYPE redrive_long_polls_waiting gauge/);
  assert.equal((await fetch(`${s.url}/metrics`, { method: 'POST' })).status, 405);
});

test('with --credentials and no metrics flag, /metrics refuses and says which flag opens it', async () => {
  const s = await serve(['--credentials', keys]);
  const res = await scrape(`${s.url}/metrics`);
  assert.equal(res.status, 403);
  // The start-up line does not advertise a URL that answers 403.
  assert.match(
    s.output(),
    /"metrics":"closed: --credentials is on; open it with --metrics-token-file or --metrics-address"/,
  );
  assert.doesNotMatch(s.output(), /"durability"/, 'memory has no --durability');
  assert.match(await res.text(), /--metrics-token-file or --metrics-address/);
});

test('with --metrics-token-file, a scrape needs the bearer token', async () => {
  const s = await serve(['--credentials', keys, '--metrics-token-file', tokenFile]);
  assert.equal((await scrape(`${s.url}/metrics`)).status, 401);
  assert.equal((await scrape(`${s.url}/metrics`, 'wrong-token-of-same-size')).status, 401);
  assert.equal((await scrape(`${s.url}/metrics`, 's3cret-scrape-toke')).status, 401);
  const res = await scrape(`${s.url}/metrics`, 's3cret-scrape-token');
  assert.equal(res.status, 200);
  assert.match(await res.text(), /redrive_long_polls_waiting\{node=/);
});

test('with --metrics-address, /metrics is served there and not on the main port', async () => {
  const s = await serve(['--credentials', keys, '--metrics-address', '127.0.0.1:0', '--node-id', 'edge-1']);
  const m = /"metrics":"(http:\/\/[^"]+)"/.exec(s.output());
  assert.ok(m, `the listening line gives the metrics URL:\n${s.output()}`);
  assert.notEqual(new URL(m[1]!).port, new URL(s.url).port);
  assert.equal((await scrape(`${s.url}/metrics`)).status, 404);
  const res = await scrape(m[1]!);
  assert.equal(res.status, 200);
  assert.match(await res.text(), /redrive_long_polls_waiting\{node="edge-1"\} 0/);
  assert.equal((await scrape(m[1]!.replace('/metrics', '/health'))).status, 404);
});

/** A GET with a Host header of the test's choosing (fetch sets its own). */
function getWithHost(url: string, host: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { host } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end();
  });
}

test("the --metrics-address listener has the main port's Host check: a rebound name reads nothing", async () => {
  const s = await serve(['--metrics-address', '127.0.0.1:0', '--allowed-hosts', 'monitor.internal']);
  const url = /"metrics":"(http:\/\/[^"]+)"/.exec(s.output())![1]!;
  const port = new URL(url).port;
  const rebound = await getWithHost(url, `evil.example:${port}`);
  assert.equal(rebound.status, 403);
  assert.match(rebound.text, /does not name this server: start it with --allowed-hosts/);
  assert.doesNotMatch(rebound.text, /redrive_/, 'no metric in the refusal');
  for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `monitor.internal:${port}`]) {
    const ok = await getWithHost(url, host);
    assert.equal(ok.status, 200, host);
    assert.match(ok.text, /# TYPE redrive_long_polls_waiting gauge/);
  }
});

const CLI = fileURLToPath(new URL('../../src/cli/index.js', import.meta.url));

for (const [args, expected] of [
  [['--metrics-address', 'localhost'], /^--metrics-address "localhost": give host:port, e\.g\. 127\.0\.0\.1:9325$/],
  [
    ['--metrics-token-file', join(dir, 'missing')],
    /^--metrics-token-file .*missing: ENOENT.*; give a readable file holding the bearer token$/,
  ],
] as const) {
  test(`a bad flag stops the server with one line: ${args.join(' ')}`, () => {
    const r = spawnSync(process.execPath, [CLI, 'serve', '--storage', 'memory', '--port', '0', ...args], {
      encoding: 'utf8',
      timeout: 15_000,
    });
    assert.equal(r.status, 1);
    // One JSON line, as every start-up failure (the server's log format, on stdout).
    const lines = r.stdout.trim().split('\n');
    assert.equal(lines.length, 1, r.stdout + r.stderr);
    const line = JSON.parse(lines[0]!) as { level: number; msg: string };
    assert.equal(line.level, 60);
    assert.match(line.msg, expected);
  });
}

test('requests refused before they reach an action are counted in redrive_requests_total', async () => {
  const s = await serve(['--credentials', keys, '--metrics-token-file', tokenFile]);
  const post = (headers: Record<string, string>, body: string) => fetch(s.url, { method: 'POST', headers, body });
  // Unsigned, over JSON and over Query: MissingAuthenticationToken, under the action named.
  assert.equal(
    (await post({ 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'AmazonSQS.ListQueues' }, '{}')).status,
    403,
  );
  assert.equal(
    (await post({ 'content-type': 'application/x-www-form-urlencoded' }, 'Action=SendMessage&Version=2012-11-05'))
      .status,
    403,
  );
  // A made-up action name is not a label value.
  assert.equal(
    (await post({ 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'AmazonSQS.MadeUp' }, '{}')).status,
    403,
  );
  const text = await (await scrape(`${s.url}/metrics`, 's3cret-scrape-token')).text();
  assert.equal(
    single(text, 'redrive_requests_total', {
      action: 'ListQueues',
      protocol: 'json',
      error_code: 'MissingAuthenticationToken',
    }),
    1,
  );
  assert.equal(
    single(text, 'redrive_requests_total', {
      action: 'SendMessage',
      protocol: 'query',
      error_code: 'MissingAuthenticationToken',
    }),
    1,
  );
  assert.equal(
    single(text, 'redrive_requests_total', {
      action: 'unknown',
      protocol: 'json',
      error_code: 'MissingAuthenticationToken',
    }),
    1,
  );
  assert.ok(!text.includes('MadeUp'), 'the made-up action is not a label');
});

/**
 * Bad start-up input: each gets one JSON log line, as the server's
 * other logs, naming the flag or file and what to do, a non-zero exit, and leaves
 * nothing on disk. Every case runs `redrive serve` in a fresh working directory, whose
 * default --data-dir (./data) must not appear.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync, type Dirent } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';
import { send, signer } from '../query/signed-request.js';
import { startServerProcess, withServerProcess } from '../support/server-process.js';

const CLI = fileURLToPath(new URL('../../src/cli/index.js', import.meta.url));
const made: string[] = [];
after(() => made.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A fresh directory anyone may use (the permission cases run as another user). */
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'redrive-start-'));
  chmodSync(d, 0o777);
  made.push(d);
  return d;
}

/**
 * Permission checks mean nothing to root, which may read and write anything: as root,
 * the permission cases run the server as the unprivileged user `nobody`.
 */
const asOther = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};

/**
 * Every file under `dir`, as paths relative to it. A folder this user may not read (a
 * permission case, when not run as root) is listed but not entered.
 */
function files(dir: string, sub = ''): string[] {
  let entries: Dirent[];
  try {
    entries = readdirSync(join(dir, sub), { withFileTypes: true });
  } catch {
    return [];
  }
  const found = entries.flatMap((e) => [join(sub, e.name), ...(e.isDirectory() ? files(dir, join(sub, e.name)) : [])]);
  return sub ? found : found.sort();
}

async function serve(args: string[], opts: { cwd: string; other?: boolean }) {
  const proc = spawn(process.execPath, [CLI, 'serve', ...args], {
    cwd: opts.cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(opts.other ? asOther : {}),
  });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (d) => (stdout += d));
  proc.stderr.on('data', (d) => (stderr += d));
  const code = await new Promise<number | null>((resolve) => proc.once('exit', resolve));
  return { code, stdout, stderr };
}

/** Runs a bad start-up and checks its line, its exit code and that the directory is as it was. */
async function refused(args: string[], line: RegExp, opts: { cwd?: string; other?: boolean } = {}) {
  const cwd = opts.cwd ?? tempDir();
  const before = files(cwd);
  const r = await serve(args, { cwd, other: opts.other });
  assert.equal(r.code, 1, `exit code; output:\n${r.stdout}${r.stderr}`);
  assert.equal(r.stderr, '', 'nothing but the JSON line');
  const lines = r.stdout.trim().split('\n');
  assert.equal(lines.length, 1, `one line, got:\n${r.stdout}`);
  const entry = JSON.parse(lines[0]!) as { level: number; msg: string; time: number };
  assert.equal(entry.level, 60, 'fatal, in the format of the other logs');
  assert.equal(typeof entry.time, 'number');
  assert.match(entry.msg, line);
  assert.deepEqual(files(cwd), before, 'nothing created or removed');
}

test('--port that is not a number', async () => {
  await refused(['--port', 'abc'], /^--port "abc": must be a whole number from 0 to 65535/);
  await refused(['--port', '70000'], /^--port "70000": must be a whole number from 0 to 65535/);
});

test('a port in use: which port and what to do, and no ./data created', async () => {
  const taken = createServer();
  await new Promise<void>((r) => taken.listen(0, '127.0.0.1', () => r()));
  const { port } = taken.address() as AddressInfo;
  try {
    await refused(
      ['--port', String(port)],
      new RegExp(
        `^--port ${port}: 127\\.0\\.0\\.1:${port} is already in use .*: stop what uses it, or give another --port`,
      ),
    );
    // The AMQP listener's port is checked as early, under its own flag.
    await refused(
      ['--port', '0', '--amqp-port', String(port)],
      new RegExp(
        `^--amqp-port ${port}: 127\\.0\\.0\\.1:${port} is already in use .*: stop what uses it, or give another --amqp-port`,
      ),
    );
    await refused(['--port', '0', '--amqp-port', 'x'], /^--amqp-port "x": must be a whole number from 0 to 65535/);
    await refused(
      ['--port', String(port), '--amqp-port', String(port)],
      new RegExp(`^--amqp-port ${port}: the same port as --port; give AMQP a port of its own$`),
    );
  } finally {
    taken.close();
  }
});

test('--data-dir naming a file', async () => {
  const cwd = tempDir();
  writeFileSync(join(cwd, 'afile'), 'x');
  await refused(
    ['--port', '0', '--data-dir', 'afile'],
    /^--data-dir afile: is a file, not a directory: give a directory/,
    { cwd },
  );
  await refused(
    ['--port', '0', '--data-dir', 'afile/sub'],
    /^--data-dir afile\/sub: cannot be created, .*afile is a file/,
    { cwd },
  );
});

test('an unreadable data directory', async () => {
  const cwd = tempDir();
  mkdirSync(join(cwd, 'locked'), { mode: 0o000 });
  chmodSync(join(cwd, 'locked'), 0o000);
  await refused(
    ['--port', '0', '--data-dir', 'locked'],
    /^--data-dir locked: cannot be read and written by the user running Redrive \(uid \d+\): fix its permissions/,
    { cwd, other: true },
  );
});

test('a data directory holding a garbage redrive.db', async () => {
  const cwd = tempDir();
  mkdirSync(join(cwd, 'data'));
  writeFileSync(join(cwd, 'data', 'redrive.db'), Buffer.alloc(8192, 'not a database '));
  await refused(
    ['--port', '0'],
    /^--data-dir \.\/data: .*data\/redrive\.db: it is not a SQLite database: move it away, or use another data directory/,
    { cwd },
  );
});

test('a read-only database file in a writable directory fails at start, not every second after', async () => {
  const cwd = tempDir();
  const dir = join(cwd, 'data');
  mkdirSync(dir);
  const first = await startServerProcess({ dataDir: dir, storage: 'sqlite' });
  await first.stop();
  chmodSync(dir, 0o777);
  rmSync(join(dir, 'redrive.lock'));
  chmodSync(join(dir, 'redrive.db'), 0o444);
  await refused(
    ['--port', '0'],
    /^--data-dir \.\/data: .*redrive\.db: it is read-only: make the file, its -wal and -shm files and its directory writable/,
    { cwd, other: true },
  );
});

test('a missing --credentials file', async () => {
  await refused(
    ['--port', '0', '--credentials', 'keys.json'],
    /^--credentials keys\.json: cannot read it \(ENOENT\): give a JSON file of access keys/,
  );
  const cwd = tempDir();
  writeFileSync(join(cwd, 'keys.json'), '{"AKID": {"secretAccessKey": "s"}}');
  await refused(
    ['--port', '0', '--credentials', 'keys.json'],
    /^--credentials keys\.json: AKID needs a secretAccessKey and a 12-digit accountId/,
    { cwd },
  );
});

test('a missing --config file', async () => {
  await refused(['--port', '0', '--config', 'redrive.yaml'], /^--config redrive\.yaml: cannot read it \(ENOENT\)/);
});

test('--region and --account-id that would end up in ARNs', async () => {
  await refused(
    ['--port', '0', '--region', 'bad region'],
    /^--region "bad region": must be a region name such as us-east-1/,
  );
  await refused(['--port', '0', '--account-id', 'abc'], /^--account-id "abc": must be 12 digits/);
});

test('--trust-proxy that names no address or range', async () => {
  await refused(
    ['--port', '0', '--trust-proxy', 'localhost'],
    /^--trust-proxy "localhost": "localhost" is not an IP address or CIDR range$/,
  );
  await refused(
    ['--port', '0', '--trust-proxy', '10.0.0.0/33'],
    /^--trust-proxy "10\.0\.0\.0\/33": "10\.0\.0\.0\/33" is not an IP address or CIDR range$/,
  );
});

test('a bad choice is refused by the option parser in the same JSON format', async () => {
  await refused(
    ['--durability', 'sometimes'],
    /option '--durability <mode>' argument 'sometimes' is invalid\. Allowed choices are process, power\./,
  );
  await refused(
    ['--storage', 'floppy'],
    /^--storage "floppy": unknown storage: give sqlite, memory or a postgres:\/\/ URL/,
  );
});

test('--host that is not an address of this machine', async () => {
  await refused(
    ['--port', '0', '--host', '203.0.113.7'],
    /^--host 203\.0\.113\.7: cannot listen on this address \(EADDRNOTAVAIL\): give an address of this machine/,
  );
});

test('a --credentials file with no key: a server nobody could use does not start', async () => {
  for (const content of ['{}', '[]']) {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'keys.json'), content);
    const line =
      content === '{}'
        ? /^--credentials keys\.json: holds no access keys, so no request could be signed: add at least one, \{"<access key id>"/
        : /^--credentials keys\.json: expected an object of access key ids/;
    await refused(['--port', '0', '--credentials', 'keys.json'], line, { cwd });
  }
});

test('--clock manual with --credentials: only a signed request moves the clock', async () => {
  const keys = { accessKeyId: 'AKIDCLOCK', secretAccessKey: 'clock-secret' };
  const credentials = { [keys.accessKeyId]: { secretAccessKey: keys.secretAccessKey, accountId: '111111111111' } };
  await withServerProcess({ storage: 'memory', manualClock: true, credentials }, async (server) => {
    const host = new URL(server.url).host;
    const clockRequest = (body: string) => ({
      method: 'POST',
      protocol: 'http:',
      hostname: host.split(':')[0]!,
      path: '/_redrive/clock',
      headers: { host, 'content-type': 'application/json' },
      body,
    });
    const unsigned = await send(server.url, clockRequest('{"advanceMs":60000}'));
    assert.equal(unsigned.status, 403, unsigned.text);
    const guessed = await send(
      server.url,
      await signer({ ...keys, secretAccessKey: 'guess' }).sign(clockRequest('{"advanceMs":60000}')),
    );
    assert.equal(guessed.status, 403, guessed.text);
    const before = await send(server.url, await signer(keys).sign(clockRequest('{"advanceMs":0}')));
    assert.equal(before.status, 200, before.text);
    const moved = await send(server.url, await signer(keys).sign(clockRequest('{"advanceMs":1000}')));
    assert.equal(moved.status, 200, moved.text);
    const now = (r: { text: string }) => (JSON.parse(r.text) as { now: number }).now;
    assert.equal(now(moved) - now(before), 1000, 'only the signed request moved it');
  });
});

test('--allowed-hosts and --max-body-memory that make no sense', async () => {
  await refused(
    ['--port', '0', '--allowed-hosts', 'ok.example,not a host'],
    /^--allowed-hosts "ok\.example,not a host": "not a host" is not a host name/,
  );
  await refused(
    ['--port', '0', '--max-body-memory', '0'],
    /^--max-body-memory "0": must be a whole number of MiB, 1 or more/,
  );
});

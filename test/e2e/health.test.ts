/**
 * `GET /health` (liveness) and `GET /ready` (readiness) against real server processes:
 * `/ready` fails with the reason when the SQLite data directory becomes read-only or its
 * disk fills up, when the PostgreSQL server stops or the database is dropped, and during
 * the shutdown grace period; it recovers by itself, without a restart, once the cause is
 * gone. Breaking storage needs root (a tmpfs, `chattr +i`, a cluster of our own).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, rmdirSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { CreateQueueCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import pg from 'pg';
import { startOwnPostgres } from '../support/own-postgres.js';
import { startServerProcess, withServerProcess, type ServerProcess } from '../support/server-process.js';

const reason = (p: Probe) => (JSON.parse(p.body) as { status: string; reason?: string }).reason ?? '';

interface Probe {
  status: number;
  body: string;
}

async function probe(base: string, path: '/health' | '/ready', method = 'GET'): Promise<Probe> {
  const res = await fetch(`${base}${path}`, { method });
  return { status: res.status, body: await res.text() };
}

/** Polls /ready until it answers `status` (with a reason matching `why`); the answer is cached for a second. */
async function readyBecomes(base: string, status: number, why?: RegExp, withinMs = 8000): Promise<Probe> {
  const until = Date.now() + withinMs;
  for (;;) {
    const p = await probe(base, '/ready');
    if (p.status === status && (!why || why.test(reason(p)))) return p;
    assert.ok(
      Date.now() < until,
      `/ready still answers ${p.status} ${p.body} after ${withinMs} ms, expected ${status} ${why ?? ''}`,
    );
    await new Promise((r) => setTimeout(r, 200));
  }
}

function sh(cmd: string, args: string[]): string | undefined {
  try {
    execFileSync(cmd, args, { stdio: 'pipe' });
    return undefined;
  } catch (e) {
    return (e as { stderr?: Buffer }).stderr?.toString().trim() || (e as Error).message;
  }
}

test('GET and HEAD on /health and /ready', async () => {
  await withServerProcess({ storage: 'memory' }, async (server) => {
    for (const path of ['/health', '/ready'] as const) {
      const get = await probe(server.url, path);
      assert.equal(get.status, 200);
      assert.deepEqual(JSON.parse(get.body), { status: path === '/health' ? 'ok' : 'ready' });
      const head = await probe(server.url, path, 'HEAD');
      assert.equal(head.status, 200);
      assert.equal(head.body, '', 'HEAD has no body');
    }
  });
});

test('SQLite: /ready fails while the data directory is read-only or its disk is full, and recovers', {
  timeout: 60_000,
}, async (t) => {
  if (process.env.REDRIVE_TEST_STORAGE === 'postgres') return t.skip('about the SQLite data directory');
  const mountPoint = mkdtempSync(join(tmpdir(), 'redrive-ready-'));
  const why = sh('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', mountPoint]);
  if (why) {
    rmdirSync(mountPoint);
    return t.skip(`cannot mount a tmpfs (${why}); run as root`);
  }
  const dataDir = join(mountPoint, 'data');
  let server: ServerProcess | undefined;
  try {
    server = await startServerProcess({ storage: 'sqlite', dataDir });
    const sqs = server.client();
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'ready' }));
    await readyBecomes(server.url, 200);

    // Read-only: root ignores permission bits, so the directory is made immutable, which
    // the kernel refuses to root as well.
    assert.equal(sh('chattr', ['+i', dataDir]), undefined);
    try {
      const down = await readyBecomes(server.url, 503);
      assert.match(reason(down), /data directory .* is read-only \(EPERM\)/);
      assert.equal((await probe(server.url, '/ready', 'HEAD')).status, 503);
      assert.equal((await probe(server.url, '/health')).status, 200, 'the process is still alive');
    } finally {
      sh('chattr', ['-i', dataDir]);
    }
    await readyBecomes(server.url, 200);

    // Disk full: another file takes the space.
    const ballast = join(mountPoint, 'ballast');
    const fd = openSync(ballast, 'w');
    try {
      for (const chunk = Buffer.alloc(64 * 1024); ; ) writeSync(fd, chunk);
    } catch (e) {
      assert.equal((e as NodeJS.ErrnoException).code, 'ENOSPC');
    } finally {
      closeSync(fd);
    }
    const full = await readyBecomes(server.url, 503);
    // Sends may still fit: the check says the threshold, not that the disk is full.
    assert.match(
      reason(full),
      /disk holding the data directory .* has \d+ bytes free, below the free-space threshold of 2097152 bytes \(LOW_FREE_SPACE\)/,
    );
    rmSync(ballast);
    await readyBecomes(server.url, 200);
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'after recovery' }));
  } finally {
    if (server) {
      await server.kill();
      server.cleanup();
    }
    if (sh('umount', [mountPoint])) sh('umount', ['-l', mountPoint]);
    rmdirSync(mountPoint);
  }
});

test('SQLite: /ready fails when the kernel turns the file system read-only under the server', {
  timeout: 60_000,
}, async (t) => {
  if (process.env.REDRIVE_TEST_STORAGE === 'postgres') return t.skip('about the SQLite data directory');
  // ext4 with errors=remount-ro goes read-only on an error even with files open for
  // writing (a plain remount is refused then). Directory permissions still look fine,
  // so only the real write of the check can see it.
  const dir = mkdtempSync(join(tmpdir(), 'redrive-ext4-'));
  const image = join(dir, 'fs.img');
  const mountPoint = join(dir, 'mnt');
  execFileSync('mkdir', [mountPoint]);
  execFileSync('truncate', ['-s', '32M', image]);
  const why =
    sh('mkfs.ext4', ['-q', '-F', '-O', '^has_journal', image]) ??
    sh('mount', ['-o', 'loop,errors=remount-ro', image, mountPoint]);
  if (why) {
    rmSync(dir, { recursive: true, force: true });
    return t.skip(`cannot mount an ext4 image (${why}); run as root with loop devices`);
  }
  let server: ServerProcess | undefined;
  try {
    const device = execFileSync('findmnt', ['-n', '-o', 'SOURCE', mountPoint]).toString().trim();
    server = await startServerProcess({ storage: 'sqlite', dataDir: join(mountPoint, 'data') });
    await readyBecomes(server.url, 200);
    execFileSync('sh', ['-c', `echo redrive-test > /sys/fs/ext4/${device.replace('/dev/', '')}/trigger_fs_error`]);
    const down = await readyBecomes(server.url, 503);
    assert.match(reason(down), /Storage unavailable: .*\(SQLITE_/);
    assert.equal((await probe(server.url, '/health')).status, 200);
  } finally {
    if (server) {
      await server.kill();
      server.cleanup();
    }
    if (sh('umount', [mountPoint])) sh('umount', ['-l', mountPoint]);
    rmSync(dir, { recursive: true, force: true });
  }
});

test('PostgreSQL: /ready fails while the server is stopped and recovers; fails when the database is dropped', {
  timeout: 90_000,
}, async () => {
  const own = await startOwnPostgres();
  let server: ServerProcess | undefined;
  const admin = async (sql: string) => {
    const c = new pg.Client({ connectionString: own.url() });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  try {
    await admin('CREATE DATABASE redrive');
    server = await startServerProcess({ storage: own.url('redrive') });
    const sqs = server.client();
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'ready' }));
    await readyBecomes(server.url, 200);

    own.stop();
    const stopped = await readyBecomes(server.url, 503);
    assert.match(reason(stopped), /database/i);
    assert.equal((await probe(server.url, '/ready', 'HEAD')).status, 503);
    assert.equal((await probe(server.url, '/health')).status, 200);
    own.start();
    await readyBecomes(server.url, 200);
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'after restart of the database' }));

    await admin('DROP DATABASE redrive WITH (FORCE)');
    const dropped = await readyBecomes(server.url, 503);
    assert.match(reason(dropped), /the database does not exist \(3D000\)/);
    // Created again but empty: reachable, yet the schema is not there.
    await admin('CREATE DATABASE redrive');
    await readyBecomes(server.url, 503, /schema is at version 0, not \d+: migrations have not run/);
  } finally {
    if (server) {
      await server.kill();
      server.cleanup();
    }
    own.destroy();
  }
});

test('shutdown: /ready answers 503 during the grace period while requests are still served', {
  timeout: 30_000,
}, async () => {
  const server = await startServerProcess({ storage: 'memory', args: ['--shutdown-grace', '3'] });
  try {
    const sqs = server.client();
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'draining' }));
    assert.equal((await probe(server.url, '/ready')).status, 200);
    const exited = new Promise<number | null>((resolve) => server.proc.once('exit', resolve));
    const termAt = Date.now();
    server.proc.kill('SIGTERM');
    const down = await readyBecomes(server.url, 503, undefined, 1000);
    assert.equal(reason(down), 'the server is shutting down');
    assert.equal((await probe(server.url, '/health')).status, 200, 'alive while draining');
    const sent = await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'during the grace period' }));
    assert.ok(sent.MessageId, 'requests are still served');
    assert.equal(await exited, 0);
    assert.ok(
      Date.now() - termAt >= 2900,
      `exited ${Date.now() - termAt} ms after SIGTERM, before the grace period ended`,
    );
    assert.match(server.output(), /"graceMs":3000,"msg":"shutting down"/);
  } finally {
    if (server.proc.exitCode === null) await server.kill();
    server.cleanup();
  }
});

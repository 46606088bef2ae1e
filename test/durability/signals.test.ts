/**
 * Clean exits: SIGTERM and SIGINT stop the server on every store
 * within the drain time, even when whoever read its stdout and stderr has gone away
 * (every log write then fails with EPIPE), and when a client has sent half a request
 * and gone quiet (the drain ends rather than wait for the 30 s request timeout).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { createTestDatabase } from '../support/postgres.js';

const CLI = fileURLToPath(new URL('../../src/cli/index.js', import.meta.url));

/**
 * `quiet`: the case of `( setsid redrive serve … ) | head -1`, a session leader that
 * writes nothing between its reader going and the signal, so the first write to fail is
 * the shutdown's own log line, and the exit flush met the broken pipe.
 */
async function stopsWithClosedPipes(storage: string, signal: NodeJS.Signals, quiet = false): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'redrive-signals-'));
  const proc = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--storage', storage, '--data-dir', dataDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: quiet,
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.once('exit', (code, sig) => resolve({ code, signal: sig })),
  );
  try {
    let out = '';
    const url = await new Promise<string>((resolve, reject) => {
      proc.stdout.on('data', (d) => {
        out += d;
        const m = /"url":"(http:\/\/[^"]+)"/.exec(out);
        if (m) resolve(m[1]!);
      });
      void exited.then(() => reject(new Error(`server exited:\n${out}`)));
    });
    // The reader goes away, as `redrive serve | head -1` leaves it.
    proc.stdout.destroy();
    proc.stderr.destroy();
    // Requests the server answers, and logs about, after its pipes have closed.
    for (let i = 0; i < (quiet ? 0 : 3); i++) {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'x-amz-target': 'AmazonSQS.ListQueues', 'content-type': 'application/x-amz-json-1.0' },
        body: '{',
      });
      assert.equal(res.status, 400);
    }
    // And a client that sent half a request and went quiet: the drain ends all the same.
    // (Not when quiet: nothing in flight, so the exit follows the shutdown's log at once.)
    const { port, hostname } = new URL(url);
    const slow = quiet ? undefined : connect(Number(port), hostname);
    if (slow) {
      slow.on('error', () => {});
      await new Promise((r) => slow.once('connect', r));
      slow.write(
        'POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-amz-json-1.0\r\nX-Amz-Target: AmazonSQS.ListQueues\r\nContent-Length: 100\r\n\r\n{',
      );
    }
    await new Promise((r) => setTimeout(r, quiet ? 300 : 100));
    const started = Date.now();
    proc.kill(signal);
    const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 5_000).unref());
    const result = await Promise.race([exited, timeout]);
    assert.notEqual(result, 'timeout', `still running 5 s after ${signal}`);
    assert.deepEqual(result, { code: 0, signal: null }, 'a clean exit');
    assert.ok(Date.now() - started < 5_000);
    slow?.destroy();
  } finally {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGKILL');
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  }
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  test(`${signal} with closed stdout and stderr: sqlite exits within 5 s`, () =>
    stopsWithClosedPipes('sqlite', signal));
  test(`${signal} with closed stdout and stderr: memory exits within 5 s`, () =>
    stopsWithClosedPipes('memory', signal));
  test(`${signal} with closed pipes and nothing logged since: a memory-store session leader exits within 5 s`, () =>
    stopsWithClosedPipes('memory', signal, true));
  test(`${signal} with closed pipes and nothing logged since: a sqlite session leader exits within 5 s`, () =>
    stopsWithClosedPipes('sqlite', signal, true));
  test(`${signal} with closed stdout and stderr: postgres exits within 5 s`, async () => {
    const db = await createTestDatabase();
    try {
      await stopsWithClosedPipes(db.url, signal);
    } finally {
      await db.drop();
    }
  });
}

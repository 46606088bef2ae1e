/**
 * Unit tests of the load-shedding bounds: the door (src/server/admission.ts) on a bare
 * node:http server, and the engine's cap on waiting long polls on a manual clock.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { Admission, admissionLimits } from '../../src/server/admission.js';
import { SqsError } from '../../src/engine/kernel/errors.js';
import { actions } from '../../src/engine/actions/registry.js';
import { ManualClock } from '../../src/engine/kernel/clock.js';
import { Engine } from '../../src/engine/engine.js';
import { SqliteStore } from '../../src/stores/sqlite/store.js';
import { ctx, settle } from '../engine/support.js';
import { sleep, sqs } from './support.js';

test('the door sheds requests and body bytes past its limits with a clean 503, and counts down', async () => {
  const admission = new Admission({ maxRequests: 3, maxBodyBytes: 10_000, maxLongPolls: 2 });
  let release!: () => void;
  let released = new Promise<void>((r) => (release = r));
  const server = createServer((req, res) => {
    const ticket = admission.admit(req, res, req.socket.remoteAddress ?? '');
    if (!ticket) return;
    req.resume();
    void released.then(() => {
      res.end('{}');
      admission.done(ticket);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const calls = Array.from({ length: 5 }, () => sqs(base, 'SendMessage', { MessageBody: 'x' }));
    // Three are admitted once their requests arrived, however slow the machine; the other two are shed.
    for (const until = Date.now() + 10_000; admission.requests < 3 && Date.now() < until; ) await sleep(20);
    assert.equal(admission.requests, 3);
    // The Query protocol gets its XML error.
    const query = await fetch(`${base}/?Action=ReceiveMessage`, { method: 'POST' });
    assert.equal(query.status, 503);
    assert.match(await query.text(), /<Code>ServiceUnavailable<\/Code>/);
    release();
    const answers = await Promise.all(calls);
    const shed = answers.filter((a) => a.status === 503);
    assert.equal(shed.length, 2);
    for (const a of shed) {
      assert.equal(a.errorType, 'ServiceUnavailable');
      assert.match(String(a.body?.message), /Too many concurrent requests; the server is shedding load/);
    }
    assert.equal(answers.filter((a) => a.status === 200).length, 3);
    await sleep(50);
    assert.deepEqual([admission.requests, admission.bodyBytes], [0, 0]);

    released = new Promise<void>((r) => (release = r));
    const big = await sqs(base, 'SendMessage', { MessageBody: 'y'.repeat(20_000) });
    assert.equal(big.status, 503);
    assert.match(String(big.body?.message), /request data in flight/);
    release();
    assert.equal((await sqs(base, 'SendMessage', { MessageBody: 'fits' })).status, 200);
  } finally {
    server.closeAllConnections();
    server.close();
  }
});

test('limits follow the open-file limit, leaving a quarter of the requests to non-waiting work', () => {
  assert.deepEqual(admissionLimits(1024), {
    maxRequests: 896,
    maxBodyBytes: 512 * 1024 * 1024,
    maxLongPolls: 672,
    smallBodyBytes: 64 * 1024,
    maxConnectionsPerClient: 224,
    maxUnfinished: 672,
    maxUnfinishedPerClient: 112,
    maxBodyBytesPerClient: 128 * 1024 * 1024,
  });
  assert.equal(admissionLimits(1024, undefined, { maxUnfinishedPerClient: 5 }).maxUnfinishedPerClient, 5);
  assert.equal(admissionLimits(1_000_000).maxLongPolls, 10_000);
  assert.equal(admissionLimits(100).maxRequests, 64);
  // One of 4 HTTP threads (--threads 4): every limit split four ways, an address's too.
  assert.deepEqual(admissionLimits(1024, undefined, {}, 4), {
    maxRequests: 224,
    maxBodyBytes: 128 * 1024 * 1024,
    maxLongPolls: 168,
    smallBodyBytes: 64 * 1024,
    maxConnectionsPerClient: 56,
    maxUnfinished: 168,
    maxUnfinishedPerClient: 28,
    maxBodyBytesPerClient: 32 * 1024 * 1024,
  });
  // A thread's body share still holds a largest request for one address: at least 32 MiB
  // (or the whole budget, when smaller), whatever the split.
  assert.equal(admissionLimits(1024, 32 * 1024 * 1024, {}, 2).maxBodyBytes, 32 * 1024 * 1024);
  assert.equal(admissionLimits(1024, 16 * 1024 * 1024, {}, 2).maxBodyBytes, 16 * 1024 * 1024);
  assert.equal(admissionLimits(1024, 512 * 1024 * 1024, {}, 32).maxBodyBytes, 32 * 1024 * 1024);
});

test('past maxLongPolls a receive returns what is there but does not wait: empty means 503', async () => {
  const engine = new Engine({
    store: new SqliteStore({ path: ':memory:' }),
    clock: new ManualClock(1_700_000_000_000),
    region: 'us-east-1',
    maxLongPolls: 2,
    // The pool's cap, not one account's share of it (test/security/account-quotas.test.ts).
    quotas: { longPolls: 2 },
  });
  const call = (action: string, input: Record<string, unknown>, signal?: AbortSignal) =>
    actions[action]!(engine, ctx, input, signal) as Promise<Record<string, any>>;
  try {
    const { QueueUrl } = await call('CreateQueue', { QueueName: 'capped' });
    const abort = new AbortController();
    const waiting = [0, 1].map(() => call('ReceiveMessage', { QueueUrl, WaitTimeSeconds: 20 }, abort.signal));
    await settle();
    assert.equal(engine.longPolls.size, 2);
    await assert.rejects(call('ReceiveMessage', { QueueUrl, WaitTimeSeconds: 20 }), (e: unknown) => {
      assert.ok(e instanceof SqsError);
      assert.equal(e.status, 503);
      assert.match(e.message, /Too many long polls/);
      return true;
    });
    // A short poll is not a long poll: it is answered as usual.
    assert.deepEqual(await call('ReceiveMessage', { QueueUrl }), {});
    // With a message there, a capped receive still gets it (one of the waiters may win it).
    await call('SendMessage', { QueueUrl, MessageBody: 'm' });
    await settle();
    abort.abort();
    await Promise.all(waiting);
  } finally {
    await engine.close();
    await engine.store.close();
  }
});

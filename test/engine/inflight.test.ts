/**
 * The in-flight limit of a standard queue. SQS's is about 120,000, too many to reach end
 * to end, so this drives the engine directly with a limit of 5.
 */
import { test, describe, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { actions } from '../../src/engine/actions/registry.js';
import { ManualClock } from '../../src/engine/kernel/clock.js';
import { Engine } from '../../src/engine/engine.js';
import { SqsError } from '../../src/engine/kernel/errors.js';
import type { RequestContext } from '../../src/engine/kernel/types.js';
import { SqliteStore } from '../../src/stores/sqlite/store.js';
import { messageCounts } from '../../src/engine/store/messages.js';

const ctx: RequestContext = {
  accountId: '000000000000',
  region: 'us-east-1',
  baseUrl: 'http://localhost:9324',
  requestId: 't',
};

let clock: ManualClock;
let engine: Engine;
let QueueUrl: string;

const call = async (action: string, input: Record<string, unknown>) =>
  (await actions[action]!(engine, ctx, input)) as { Messages?: { ReceiptHandle: string }[] } & Record<string, unknown>;

beforeEach(async () => {
  clock = new ManualClock();
  engine = new Engine({ store: new SqliteStore({ path: ':memory:' }), clock, region: 'us-east-1', inflightLimit: 5 });
  QueueUrl = (await call('CreateQueue', { QueueName: 'limited' })).QueueUrl as string;
  for (let i = 0; i < 8; i++) await call('SendMessage', { QueueUrl, MessageBody: `m${i}` });
});
afterEach(async () => {
  await engine.close();
  await engine.store.close();
});

/** Fills the queue's in-flight allowance: 5 messages received and not deleted. */
async function fillInflight(): Promise<{ ReceiptHandle: string }[]> {
  const out = await call('ReceiveMessage', { QueueUrl, MaxNumberOfMessages: 5, VisibilityTimeout: 300 });
  assert.equal(out.Messages?.length, 5);
  return out.Messages!;
}

/** Advances the manual clock in small steps until `p` settles (the long poll parks asynchronously). */
async function advanceUntilSettled<T>(p: Promise<T>, stepMs: number, maxSteps: number): Promise<T> {
  let settled = false;
  void p.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (let i = 0; i < maxSteps && !settled; i++) {
    await new Promise((r) => setImmediate(r));
    clock.advance(stepMs);
  }
  return p;
}

describe('in-flight limit of a standard queue', () => {
  test('a short poll past the limit gets OverLimit (403)', async () => {
    await fillInflight();
    await assert.rejects(call('ReceiveMessage', { QueueUrl, WaitTimeSeconds: 0 }), (e: unknown) => {
      assert.ok(e instanceof SqsError);
      assert.equal(e.type, 'OverLimit');
      assert.equal(e.code, 'OverLimit');
      assert.equal(e.status, 403);
      return true;
    });
    // Nothing was received by the refused call.
    const counts = await messageCounts(
      engine.store.messages,
      (await engine.store.queues.get({ accountId: '000000000000', region: 'us-east-1', name: 'limited' }))!.id,
      clock.now(),
    );
    assert.deepEqual(counts, { visible: 3, inflight: 5, delayed: 0 });
  });

  test('a long poll past the limit returns nothing, without an error', async () => {
    await fillInflight();
    const out = await advanceUntilSettled(call('ReceiveMessage', { QueueUrl, WaitTimeSeconds: 2 }), 250, 100);
    assert.equal(out.Messages, undefined);
  });

  test('receiving works again once a message leaves flight', async () => {
    const received = await fillInflight();
    await call('DeleteMessage', { QueueUrl, ReceiptHandle: received[0]!.ReceiptHandle });
    const out = await call('ReceiveMessage', { QueueUrl, MaxNumberOfMessages: 10 });
    // Up to the limit again: one place was freed.
    assert.ok((out.Messages?.length ?? 0) >= 1);
    await assert.rejects(
      call('ReceiveMessage', { QueueUrl }),
      (e: unknown) => e instanceof SqsError && e.type === 'OverLimit',
    );
  });

  test('messages whose visibility expired no longer count', async () => {
    await fillInflight();
    clock.advance(300_000);
    const out = await call('ReceiveMessage', { QueueUrl, MaxNumberOfMessages: 5 });
    assert.equal(out.Messages?.length, 5);
  });
});

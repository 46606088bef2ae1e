/**
 * Fair queues on the manual clock: a group holding more than a tenth of the queue's
 * messages in flight, and at least 30, is noisy; receives then serve the quiet groups
 * first, even when the noisy group's backlog was sent before them.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import {
  FAIR_REFRESH_MS,
  judgeNoisy,
  NOISY_HOLD_MS,
  NOISY_MIN_INFLIGHT,
} from '../../src/engine/messages/fair-queues.js';
import { takeOrder } from '../../src/engine/store/standard-plan.js';
import { testEngine } from './support.js';

type Env = ReturnType<typeof testEngine>;
let env: Env | undefined;
afterEach(async () => {
  await env?.close();
  env = undefined;
});

async function send(e: Env, QueueUrl: string, group: string | undefined, n: number): Promise<void> {
  for (let i = 0; i < n; i += 10) {
    const Entries = Array.from({ length: Math.min(10, n - i) }, (_, k) => ({
      Id: `e${k}`,
      MessageBody: `${group ?? 'none'}-${i + k}`,
      ...(group !== undefined && { MessageGroupId: group }),
    }));
    await e.call('SendMessageBatch', { QueueUrl, Entries });
  }
}

/** Bodies of one receive of 10, held for five minutes. */
async function receive(e: Env, QueueUrl: string): Promise<string[]> {
  const r = await e.call('ReceiveMessage', { QueueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 300 });
  return (r.Messages ?? []).map((m: { Body: string }) => m.Body);
}

/** A noisy group with 150 messages sent first, 40 of them in flight; then 10 quiet groups send one each. */
async function noisyScene(fairQueues?: boolean) {
  env = testEngine(fairQueues === undefined ? {} : { fairQueues });
  const { QueueUrl } = await env.call('CreateQueue', { QueueName: 'tenants' });
  await send(env, QueueUrl, 'big', 150);
  for (let i = 0; i < 4; i++)
    assert.deepEqual(
      (await receive(env, QueueUrl)).map((b) => b.split('-')[0]),
      Array(10).fill('big'),
    );
  for (let g = 0; g < 10; g++) await send(env, QueueUrl, `small${g}`, 1);
  env.clock.advance(FAIR_REFRESH_MS);
  return { e: env, QueueUrl };
}

describe('fair queues', () => {
  test("quiet groups are served ahead of a noisy group's older backlog", async () => {
    const { e, QueueUrl } = await noisyScene();
    const got = await receive(e, QueueUrl);
    assert.deepEqual(got.sort(), Array.from({ length: 10 }, (_, g) => `small${g}-0`).sort());
    // With no quiet message left, the noisy group is served as usual, oldest first.
    assert.deepEqual(
      await receive(e, QueueUrl),
      Array.from({ length: 10 }, (_, i) => `big-${40 + i}`),
    );
  });

  test('with fair queuing switched off the same receive takes the oldest messages', async () => {
    const { e, QueueUrl } = await noisyScene(false);
    assert.deepEqual(
      await receive(e, QueueUrl),
      Array.from({ length: 10 }, (_, i) => `big-${40 + i}`),
    );
  });

  test('a group under the thresholds is not noisy: order stays oldest first', async () => {
    env = testEngine();
    const { QueueUrl } = await env.call('CreateQueue', { QueueName: 'calm' });
    await send(env, QueueUrl, 'big', 100);
    // 20 in flight: above a tenth of the queue's, but under 30 of its own.
    for (let i = 0; i < 2; i++) await receive(env, QueueUrl);
    await send(env, QueueUrl, 'small', 1);
    env.clock.advance(FAIR_REFRESH_MS);
    assert.deepEqual(
      await receive(env, QueueUrl),
      Array.from({ length: 10 }, (_, i) => `big-${20 + i}`),
    );
  });

  test('messages without a group id are each a tenant of their own, served as quiet ones', async () => {
    env = testEngine();
    const { QueueUrl } = await env.call('CreateQueue', { QueueName: 'mixed' });
    await send(env, QueueUrl, 'big', 50);
    for (let i = 0; i < 4; i++) await receive(env, QueueUrl);
    await send(env, QueueUrl, undefined, 3);
    env.clock.advance(FAIR_REFRESH_MS);
    // (Behind a noisy backlog deeper than the receive's window they wait: docs/fair-queues.md.)
    assert.deepEqual(await receive(env, QueueUrl), [
      'none-0',
      'none-1',
      'none-2',
      ...Array.from({ length: 7 }, (_, i) => `big-${40 + i}`),
    ]);
  });

  test('a group stays noisy through a dip in flight, and is released NOISY_HOLD_MS after its last detection', async () => {
    const { e, QueueUrl } = await noisyScene();
    assert.equal((await receive(e, QueueUrl))[0]!.startsWith('small'), true);
    // Purging deletes the noisy group's messages in flight: its share drops to nothing ...
    await e.call('PurgeQueue', { QueueUrl });
    await send(e, QueueUrl, 'big', 5);
    await send(e, QueueUrl, 'small0', 1);
    e.clock.advance(FAIR_REFRESH_MS);
    assert.deepEqual(await receive(e, QueueUrl), ['small0-0', 'big-0', 'big-1', 'big-2', 'big-3', 'big-4']);
    // ... and once the hold has passed, the queue is served oldest first again.
    e.clock.advance(NOISY_HOLD_MS);
    await send(e, QueueUrl, 'big', 3);
    await send(e, QueueUrl, 'small0', 1);
    assert.deepEqual(await receive(e, QueueUrl), ['big-0', 'big-1', 'big-2', 'small0-0']);
  });

  test("the fair-queue figures are queue attributes under CloudWatch's names, only when asked", async () => {
    const { e, QueueUrl } = await noisyScene();
    await send(e, QueueUrl, 'late', 2);
    await e.call('SendMessage', { QueueUrl, MessageBody: 'later', MessageGroupId: 'late', DelaySeconds: 60 });
    await receive(e, QueueUrl); // 10 quiet in flight
    e.clock.advance(3000);
    const names = [
      'ApproximateNumberOfNoisyGroups',
      'ApproximateNumberOfMessagesVisibleInQuietGroups',
      'ApproximateNumberOfMessagesNotVisibleInQuietGroups',
      'ApproximateNumberOfMessagesDelayedInQuietGroups',
      'ApproximateAgeOfOldestMessageInQuietGroups',
    ];
    const { Attributes } = await e.call('GetQueueAttributes', { QueueUrl, AttributeNames: names });
    assert.deepEqual(Attributes, {
      ApproximateNumberOfNoisyGroups: '1',
      ApproximateNumberOfMessagesVisibleInQuietGroups: '2',
      ApproximateNumberOfMessagesNotVisibleInQuietGroups: '10',
      ApproximateNumberOfMessagesDelayedInQuietGroups: '1',
      ApproximateAgeOfOldestMessageInQuietGroups: '3',
    });
    const all = await e.call('GetQueueAttributes', { QueueUrl, AttributeNames: ['All'] });
    assert.equal(all.Attributes.ApproximateNumberOfNoisyGroups, undefined);
    assert.equal(all.Attributes.ApproximateNumberOfMessagesNotVisible, '50');
  });
});

describe('the fair-queue rules', () => {
  test('judgeNoisy: a tenth of the queue in flight and at least 30, held for NOISY_HOLD_MS after the last detection', () => {
    const groups = new Map([
      ['a', NOISY_MIN_INFLIGHT],
      ['b', 29],
      ['c', 200],
    ]);
    assert.deepEqual([...judgeNoisy({ total: 400, groups }, 0).keys()], ['c']);
    assert.deepEqual([...judgeNoisy({ total: 259, groups }, 0).keys()].sort(), ['a', 'c']);
    const detectedAt = new Map<string, number>();
    judgeNoisy({ total: 400, groups }, 0, detectedAt);
    assert.deepEqual([...judgeNoisy({ total: 0, groups: new Map() }, NOISY_HOLD_MS - 1, detectedAt)], [['c', 0]]);
    assert.deepEqual([...judgeNoisy({ total: 0, groups: new Map() }, NOISY_HOLD_MS, detectedAt)], []);
  });

  test('takeOrder: quiet and ungrouped first by position, then noisy groups with the fewest in flight first', () => {
    const row = (seq: number, groupId: string | null) => ({ seq, receiveCount: 0, groupId });
    const rows = [row(5, 'x'), row(1, 'n1'), row(2, 'n2'), row(6, null), row(3, 'n1'), row(4, 'n2'), row(5, 'x')];
    const order = takeOrder(
      rows,
      new Map([
        ['n1', 50],
        ['n2', 40],
      ]),
    ).map((r) => r.seq);
    assert.deepEqual(order, [5, 6, 2, 4, 1, 3]);
    assert.deepEqual(
      takeOrder(rows).map((r) => r.seq),
      [1, 2, 3, 4, 5, 6],
    );
  });
});

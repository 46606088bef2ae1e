/**
 * A server policy whose pattern also matches its own dead-letter
 * queue (`^shop-` with target `shop-dlq`) must not make that queue its own source nor
 * expire what it dead-lettered, unless the policy opts in with applyToDeadLetterTarget;
 * every message dropped with nowhere to go is logged with its queue, reason and id, and
 * counted. On the manual clock.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { actions } from '../../src/engine/actions/registry.js';
import { ManualClock } from '../../src/engine/kernel/clock.js';
import { Engine } from '../../src/engine/engine.js';
import type { ServerPolicyDefinition } from '../../src/engine/policies/server-policies.js';
import { SqliteStore } from '../../src/stores/sqlite/store.js';
import { ctx } from './support.js';

const url = (name: string) => `${ctx.baseUrl}/000000000000/${name}`;

async function shop(extra: Partial<ServerPolicyDefinition> = {}) {
  const clock = new ManualClock(1_700_000_000_000);
  const logged: { obj: Record<string, unknown>; msg?: string }[] = [];
  const engine = new Engine({
    store: new SqliteStore({ path: ':memory:' }),
    clock,
    region: 'us-east-1',
    policies: [
      {
        name: 'shop',
        pattern: '^shop-',
        priority: 0,
        definition: { deadLetterTargetName: 'shop-dlq', maxReceiveCount: 5, messageTtlSeconds: 2, ...extra },
      },
    ],
    log: {
      info: (obj, msg) => void logged.push({ obj: obj as Record<string, unknown>, msg }),
      error() {},
      warn: (obj, msg) => void logged.push({ obj: obj as Record<string, unknown>, msg }),
    },
  });
  const call = (action: string, input: Record<string, unknown>) =>
    actions[action]!(engine, ctx, input) as Promise<Record<string, any>>;
  await call('CreateQueue', { QueueName: 'shop-dlq' });
  await call('CreateQueue', { QueueName: 'shop-orders' });
  const depth = async (name: string) => {
    const q = (await engine.store.queues.get({ accountId: '000000000000', region: 'us-east-1', name: name }))!;
    return (await engine.store.messages.peek(q.id, 0, 10)).map((m) => m.body);
  };
  return {
    engine,
    clock,
    call,
    logged,
    depth,
    close: async () => {
      await engine.close();
      await engine.store.close();
    },
  };
}

test('a policy matching its own dead-letter queue keeps what it dead-lettered there', async () => {
  const t = await shop();
  try {
    await t.call('SendMessage', { QueueUrl: url('shop-orders'), MessageBody: 'order 1' });
    t.clock.advance(3500);
    await t.engine.sweeps.expiry();
    assert.deepEqual(await t.depth('shop-dlq'), ['order 1'], 'expired into the DLQ');
    t.clock.advance(3500);
    assert.equal(await t.engine.sweeps.expiry(), 0);
    t.clock.advance(3_600_000);
    assert.equal(await t.engine.sweeps.expiry(), 0);
    assert.deepEqual(await t.depth('shop-dlq'), ['order 1'], 'still there an hour later');
    assert.equal(t.engine.deadLetterReport.dropped, 0);

    const sources = await t.call('ListDeadLetterSourceQueues', { QueueUrl: url('shop-dlq') });
    assert.deepEqual(sources.queueUrls, [url('shop-orders')], 'the DLQ is not its own source');
    const attrs = await t.call('GetQueueAttributes', { QueueUrl: url('shop-dlq'), AttributeNames: ['All'] });
    assert.equal(attrs.Attributes.RedriveAppliedPolicy, undefined, 'the policy does not apply to its target');
    assert.equal(attrs.Attributes.RedriveMessageTtlSeconds, undefined);
  } finally {
    await t.close();
  }
});

test('a lower policy matching the dead-letter queue applies to it instead', async () => {
  const t = await shop();
  try {
    t.engine.policies.replace([
      ...t.engine.policies.list(),
      { name: 'dlqs', pattern: '-dlq$', priority: -1, definition: { maxLength: 7 } },
    ]);
    const attrs = await t.call('GetQueueAttributes', { QueueUrl: url('shop-dlq'), AttributeNames: ['All'] });
    assert.deepEqual(JSON.parse(attrs.Attributes.RedriveAppliedPolicy), { name: 'dlqs', applied: { maxLength: 7 } });
  } finally {
    await t.close();
  }
});

test('with applyToDeadLetterTarget the TTL applies to the DLQ, and each drop is logged and counted', async () => {
  const t = await shop({ applyToDeadLetterTarget: true });
  try {
    const { MessageId } = await t.call('SendMessage', { QueueUrl: url('shop-orders'), MessageBody: 'order 1' });
    t.clock.advance(3500);
    await t.engine.sweeps.expiry();
    assert.deepEqual(await t.depth('shop-dlq'), ['order 1']);
    const attrs = await t.call('GetQueueAttributes', { QueueUrl: url('shop-dlq'), AttributeNames: ['All'] });
    assert.deepEqual(
      JSON.parse(attrs.Attributes.RedriveAppliedPolicy),
      { name: 'shop', applied: { messageTtlSeconds: 2 } },
      'only the limits, never the target or maxReceiveCount',
    );
    const sources = await t.call('ListDeadLetterSourceQueues', { QueueUrl: url('shop-dlq') });
    assert.deepEqual(sources.queueUrls, [url('shop-orders')], 'still not its own source');

    t.clock.advance(3500);
    assert.equal(await t.engine.sweeps.expiry(), 1);
    assert.deepEqual(await t.depth('shop-dlq'), []);
    assert.equal(t.engine.deadLetterReport.dropped, 1);
    const drop = t.logged.find((w) => w.msg?.includes('dropped'));
    assert.ok(drop, 'a line for the drop');
    assert.deepEqual(
      [drop.obj.queue, drop.obj.reason, drop.obj.count, drop.obj.messageIds],
      ['shop-dlq', 'expired', 1, [MessageId]],
    );
  } finally {
    await t.close();
  }
});

test('drop-head with no dead-letter queue logs and counts what it pushes out', async () => {
  const t = await shop();
  try {
    await t.call('CreateQueue', { QueueName: 'capped', Attributes: { RedriveMaxLength: '1' } });
    const first = await t.call('SendMessage', { QueueUrl: url('capped'), MessageBody: 'one' });
    await t.call('SendMessage', { QueueUrl: url('capped'), MessageBody: 'two' });
    assert.deepEqual(await t.depth('capped'), ['two']);
    assert.equal(t.engine.deadLetterReport.dropped, 1);
    const drop = t.logged.find((w) => w.msg?.includes('dropped'))!;
    assert.deepEqual(
      [drop.obj.queue, drop.obj.reason, drop.obj.count, drop.obj.messageIds],
      ['capped', 'maxlen', 1, [first.MessageId]],
    );
  } finally {
    await t.close();
  }
});

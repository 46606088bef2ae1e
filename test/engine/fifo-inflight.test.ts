/**
 * The in-flight limit of a FIFO queue: 120,000 since November 2024, as for standard
 * queues (it was 20,000); past it a receive gets nothing and no error.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { ctx, testEngine } from './support.js';

const url = (name: string) => `${ctx.baseUrl}/000000000000/${name}`;

test('a FIFO queue with more than 20,000 messages in flight still hands out messages', async () => {
  const { engine, clock, call, close } = testEngine();
  after(close);
  await call('CreateQueue', { QueueName: 'many.fifo', Attributes: { FifoQueue: 'true' } });
  const q = (await engine.store.queues.get({ accountId: '000000000000', region: 'us-east-1', name: 'many.fifo' }))!;
  const now = clock.now();
  const n = 20_001;
  // Through the store: 20,001 receives through the API would take long and prove no more.
  await engine.store.messages.send(
    q.id,
    Array.from({ length: n + 1 }, (_, i) => ({
      messageId: `m${i}`,
      body: `b${i}`,
      md5OfBody: 'x',
      senderId: 's',
      sentAt: now,
      visibleAt: now,
      groupId: `g${i}`,
      dedupId: `d${i}`,
      dedupScope: 'queue',
      dedupUntil: now + 300_000,
    })),
  );
  const held = await engine.store.messages.receive(q.id, {
    now,
    max: n,
    visibilityTimeoutMs: 300_000,
    retentionCutoff: 0,
    newToken: () => 't',
    fifo: true,
  });
  assert.equal(held.messages.length, n);
  assert.equal((await engine.store.messages.inflightByGroup(q.id, now)).total, n);
  const out = await call('ReceiveMessage', { QueueUrl: url('many.fifo') });
  assert.deepEqual(
    out.Messages?.map((m: { Body: string }) => m.Body),
    [`b${n}`],
    'the old limit of 20,000 no longer applies',
  );
});

test('past the limit, a FIFO receive gets nothing and no error', async () => {
  const { call, close } = testEngine({ inflightLimit: 2 });
  after(close);
  await call('CreateQueue', {
    QueueName: 'few.fifo',
    Attributes: { FifoQueue: 'true', ContentBasedDeduplication: 'true' },
  });
  for (const g of ['a', 'b', 'c'])
    await call('SendMessage', { QueueUrl: url('few.fifo'), MessageBody: g, MessageGroupId: g });
  assert.equal(
    (await call('ReceiveMessage', { QueueUrl: url('few.fifo'), MaxNumberOfMessages: 2 })).Messages.length,
    2,
  );
  assert.equal((await call('ReceiveMessage', { QueueUrl: url('few.fifo') })).Messages, undefined);
});

/**
 * A server policy's deadLetterTargetArn names one account's queue; a queue of another
 * account that the policy matches is not dead-lettered into it (a dead-letter queue is
 * in its source's account, as in SQS, docs/security.md): its message stays.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { dispatch } from '../../src/engine/actions/registry.js';
import { ManualClock } from '../../src/engine/kernel/clock.js';
import { Engine } from '../../src/engine/engine.js';
import type { RequestContext } from '../../src/engine/kernel/types.js';
import { SqliteStore } from '../../src/stores/sqlite/store.js';
import { ctx } from './support.js';

test("a policy's target in one account takes no dead letters from another account's queues", async () => {
  const engine = new Engine({
    store: new SqliteStore({ path: ':memory:' }),
    clock: new ManualClock(1_700_000_000_000),
    region: 'us-east-1',
    policies: [
      {
        name: 'all',
        pattern: '^work',
        priority: 0,
        definition: { deadLetterTargetArn: 'arn:aws:sqs:us-east-1:000000000000:central-dlq', maxReceiveCount: 1 },
      },
    ],
  });
  const other: RequestContext = { ...ctx, accountId: '222222222222' };
  const as = (c: RequestContext) => (action: string, input: Record<string, unknown>) =>
    dispatch(engine, { ...c }, action, input) as Promise<Record<string, any>>;
  try {
    const { QueueUrl: dlq } = await as(ctx)('CreateQueue', { QueueName: 'central-dlq' });
    for (const c of [ctx, other]) {
      const { QueueUrl } = await as(c)('CreateQueue', { QueueName: 'work', Attributes: { VisibilityTimeout: '0' } });
      await as(c)('SendMessage', { QueueUrl, MessageBody: `from ${c.accountId}` });
      for (let i = 0; i < 3; i++) await as(c)('ReceiveMessage', { QueueUrl });
    }
    const { Messages } = await as(ctx)('PeekMessages', { QueueUrl: dlq });
    assert.deepEqual(
      Messages.map((m: { Body: string }) => m.Body),
      ['from 000000000000'],
      "only the target's own account dead-letters into it",
    );
    const { QueueUrl: theirs } = await as(other)('GetQueueUrl', { QueueName: 'work' });
    assert.equal(
      (await as(other)('PeekMessages', { QueueUrl: theirs })).Messages.length,
      1,
      'the other account keeps its message',
    );
  } finally {
    await engine.close();
    await engine.store.close();
  }
});

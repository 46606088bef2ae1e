/** The console's extensions in the engine: depth sampling per minute, and who may call them. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sampleDepths } from '../../src/engine/activity/activity-sampler.js';
import { dispatch } from '../../src/engine/actions/registry.js';
import type { RequestContext } from '../../src/engine/kernel/types.js';
import { ctx, settle, testEngine } from './support.js';

test('the depth of each minute is sampled once, at its end; the current minute shows the live depth', async () => {
  const { engine, clock, call, close } = testEngine();
  const T = clock.now() - (clock.now() % 60_000);
  clock.advance(T + 1_000 - clock.now());
  const { QueueUrl } = await call('CreateQueue', { QueueName: 'act' });
  await call('SendMessage', { QueueUrl, MessageBody: 'a' });
  await call('SendMessage', { QueueUrl, MessageBody: 'b' });
  clock.advance(60_000);
  await settle();
  assert.equal(await sampleDepths(engine), true, 'the first tick of a minute samples');
  assert.equal(await sampleDepths(engine), false, 'once a minute');
  await call('SendMessage', { QueueUrl, MessageBody: 'c' });
  const { Minutes } = await call('GetQueueActivity', { QueueUrl });
  const at = (t: number) => Minutes.find((m: { Timestamp: number }) => m.Timestamp === t);
  assert.deepEqual(at(T), {
    Timestamp: T,
    Sent: 2,
    Received: 0,
    Deleted: 0,
    DeadLettered: 0,
    DeadLetterArrivals: 0,
    Depth: 2,
  });
  assert.deepEqual(at(T + 60_000), {
    Timestamp: T + 60_000,
    Sent: 1,
    Received: 0,
    Deleted: 0,
    DeadLettered: 0,
    DeadLetterArrivals: 0,
    Depth: 3,
  });
  assert.equal(Minutes[0].Depth, 0, 'before the queue was created it held nothing');
  await close();
});

test('another account needs the grant of the matching SQS action', async () => {
  const { engine, call, close } = testEngine();
  const { QueueUrl } = await call('CreateQueue', { QueueName: 'shared' });
  const { MessageId } = await call('SendMessage', { QueueUrl, MessageBody: 'x' });
  const other: RequestContext = { ...ctx, accountId: '111111111111' };
  const as = (action: string, input: Record<string, unknown>) =>
    dispatch(engine, { ...other }, action, input) as Promise<Record<string, any>>;
  for (const [action, input] of [
    ['DeleteMessagesById', { QueueUrl, MessageIds: [MessageId] }],
    ['ChangeMessageVisibilityById', { QueueUrl, MessageId, VisibilityTimeout: 0 }],
    ['MoveMessagesById', { QueueUrl, MessageIds: [MessageId] }],
    ['GetQueueActivity', { QueueUrl }],
    ['GetDeadLetterBreakdown', { QueueUrl }],
  ] as const) {
    await assert.rejects(as(action, input), (e: Error) => e.name === 'AccessDenied', action);
  }
  await call('AddPermission', {
    QueueUrl,
    Label: 'ops',
    AWSAccountIds: ['111111111111'],
    Actions: ['GetQueueAttributes', 'DeleteMessage'],
  });
  assert.equal(
    (await as('GetQueueActivity', { QueueUrl })).Minutes.length,
    60,
    'GetQueueAttributes grants the activity',
  );
  assert.deepEqual(await as('GetDeadLetterBreakdown', { QueueUrl }), {
    BySource: [],
    ByReason: [],
    ByRejectionReason: [],
    RejectionReasonsExamined: 1,
    RejectionReasonsComplete: true,
  });
  assert.deepEqual(
    (await as('DeleteMessagesById', { QueueUrl, MessageIds: [MessageId] })).Successful,
    [{ Id: MessageId }],
    'DeleteMessage grants deletes by id',
  );
  const mine = await as('ListQueueSummaries', {});
  assert.deepEqual(mine.Queues, [], 'summaries list only the caller’s own queues');
  await close();
});

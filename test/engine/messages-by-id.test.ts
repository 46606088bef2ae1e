/** Operator actions by message id (docs/extensions.md): visibility, moves, and the triage counts, on a manual clock. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { actions } from '../../src/engine/actions/registry.js';
import { ManualClock } from '../../src/engine/kernel/clock.js';
import { Engine } from '../../src/engine/engine.js';
import { SqliteStore } from '../../src/stores/sqlite/store.js';
import { ctx } from './support.js';

const arn = (name: string) => `arn:aws:sqs:us-east-1:000000000000:${name}`;

function setup() {
  const clock = new ManualClock(1_700_000_000_000);
  const logs: { fields: Record<string, unknown>; msg: string }[] = [];
  const log = {
    info: (fields: Record<string, unknown>, msg: string) => logs.push({ fields, msg }),
    warn() {},
    error() {},
  };
  const engine = new Engine({ store: new SqliteStore({ path: ':memory:' }), clock, region: 'us-east-1', log });
  const call = (action: string, input: Record<string, unknown>) =>
    actions[action]!(engine, { ...ctx }, input) as Promise<Record<string, any>>;
  const rejects = (p: Promise<unknown>, name: string, text?: RegExp) =>
    assert.rejects(p, (e: Error) => e.name === name && (!text || text.test(e.message)));
  return {
    clock,
    logs,
    call,
    rejects,
    close: async () => {
      await engine.close();
      await engine.store.close();
    },
  };
}

/** A source queue `name` whose messages go to `name-dlq` after one receive, and a message there. */
async function deadLettered(call: ReturnType<typeof setup>['call'], name: string, fifo = false) {
  const suffix = fifo ? '.fifo' : '';
  const { QueueUrl: dlq } = await call('CreateQueue', {
    QueueName: `${name}-dlq${suffix}`,
    Attributes: fifo ? { FifoQueue: 'true' } : {},
  });
  const { QueueUrl: source } = await call('CreateQueue', {
    QueueName: `${name}${suffix}`,
    Attributes: {
      ...(fifo && { FifoQueue: 'true', ContentBasedDeduplication: 'true' }),
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arn(`${name}-dlq${suffix}`), maxReceiveCount: 1 }),
    },
  });
  await call('SendMessage', { QueueUrl: source, MessageBody: 'poison', ...(fifo && { MessageGroupId: 'g' }) });
  const [m] = (await call('ReceiveMessage', { QueueUrl: source })).Messages;
  await call('RejectMessage', { QueueUrl: source, ReceiptHandle: m.ReceiptHandle, Reason: 'bad order' });
  const [dead] = (await call('PeekMessages', { QueueUrl: dlq })).Messages;
  return { source, dlq, id: dead.MessageId as string };
}

test('ChangeMessageVisibilityById 0 makes an in-flight message visible now; the holder keeps a lapsed receipt', async () => {
  const { clock, logs, call, rejects, close } = setup();
  const { QueueUrl } = await call('CreateQueue', {
    QueueName: 'q.fifo',
    Attributes: { FifoQueue: 'true', ContentBasedDeduplication: 'true' },
  });
  const { MessageId } = await call('SendMessage', { QueueUrl, MessageBody: 'stuck', MessageGroupId: 'g' });
  const [held] = (await call('ReceiveMessage', { QueueUrl, VisibilityTimeout: 3600 })).Messages;
  assert.equal((await call('ReceiveMessage', { QueueUrl })).Messages, undefined, 'in flight: the group is held');
  clock.advance(10_000);
  assert.deepEqual(await call('ChangeMessageVisibilityById', { QueueUrl, MessageId, VisibilityTimeout: 0 }), {});
  assert.deepEqual(logs.at(-1), {
    msg: 'message visibility changed by id',
    fields: { queue: 'q.fifo', account: '000000000000', by: '000000000000', message: MessageId, visibilityTimeout: 0 },
  });
  // As after a visibility timeout ends: a FIFO queue no longer takes the old receipt.
  await rejects(
    call('DeleteMessage', { QueueUrl, ReceiptHandle: held.ReceiptHandle }),
    'InvalidParameterValueException',
    /expired/,
  );
  const [again] = (await call('ReceiveMessage', { QueueUrl, AttributeNames: ['All'] })).Messages;
  assert.equal(again.MessageId, MessageId);
  assert.equal(again.Attributes.ApproximateReceiveCount, '2');
  await rejects(
    call('ChangeMessageVisibilityById', { QueueUrl, MessageId: 'nope', VisibilityTimeout: 0 }),
    'MessageNotInflight',
  );
  await close();
});

test('ChangeMessageVisibilityById with a timeout counts from now, keeps the holder’s receipt and the 12-hour cap', async () => {
  const { clock, call, rejects, close } = setup();
  const { QueueUrl } = await call('CreateQueue', { QueueName: 'std' });
  const { MessageId } = await call('SendMessage', { QueueUrl, MessageBody: 'x' });
  await rejects(
    call('ChangeMessageVisibilityById', { QueueUrl, MessageId, VisibilityTimeout: 5 }),
    'MessageNotInflight',
    /not in flight|in flight/,
  );
  const [held] = (await call('ReceiveMessage', { QueueUrl, VisibilityTimeout: 30 })).Messages;
  await call('ChangeMessageVisibilityById', { QueueUrl, MessageId, VisibilityTimeout: 120 });
  clock.advance(119_000);
  assert.equal((await call('ReceiveMessage', { QueueUrl })).Messages, undefined, 'still hidden before 120 s');
  await rejects(
    call('ChangeMessageVisibilityById', { QueueUrl, MessageId, VisibilityTimeout: 43_200 }),
    'InvalidParameterValueException',
    /beyond the limit/,
  );
  await rejects(
    call('ChangeMessageVisibilityById', { QueueUrl, MessageId, VisibilityTimeout: 43_201 }),
    'InvalidParameterValueException',
  );
  await rejects(call('ChangeMessageVisibilityById', { QueueUrl, MessageId }), 'MissingRequiredParameterException');
  await rejects(
    call('ChangeMessageVisibilityById', { QueueUrl, VisibilityTimeout: 1 }),
    'MissingRequiredParameterException',
  );
  await call('DeleteMessage', { QueueUrl, ReceiptHandle: held.ReceiptHandle });
  clock.advance(2_000);
  assert.equal(
    (await call('ReceiveMessage', { QueueUrl })).Messages,
    undefined,
    'the holder deleted it with its receipt',
  );
  await close();
});

test('MoveMessagesById redrives a dead-lettered message to its source as a move task does: new id, history kept, counted', async () => {
  const { clock, logs, call, close } = setup();
  const { source, dlq, id } = await deadLettered(call, 'orders');
  clock.advance(1_000);
  const r = await call('MoveMessagesById', { QueueUrl: dlq, MessageIds: [id] });
  assert.equal(r.Failed.length, 0);
  assert.equal(r.Successful.length, 1);
  const moved = r.Successful[0];
  assert.equal(moved.Id, id);
  assert.notEqual(moved.MessageId, id, 'a redriven message is a new message');
  assert.equal(moved.DestinationArn, arn('orders'));
  assert.deepEqual((await call('PeekMessages', { QueueUrl: dlq })).Messages, []);
  const [back] = (await call('PeekMessages', { QueueUrl: source })).Messages;
  assert.equal(back.MessageId, moved.MessageId);
  assert.equal(back.Body, 'poison');
  assert.equal(back.DeathHistory[0].rejectReason, 'bad order', 'the death history goes with it');
  assert.equal(back.Attributes.SentTimestamp, String(clock.now()));
  assert.equal(logs.at(-1)!.msg, 'messages moved by id');
  const minute = async (q: string) => (await call('GetQueueActivity', { QueueUrl: q })).Minutes.at(-1);
  assert.equal((await minute(dlq)).Deleted, 1, 'the DLQ counts the redrive as a delete');
  assert.equal((await minute(source)).Sent, 2, 'the source counts it as a send');
  await close();
});

test('MoveMessagesById to a chosen queue; each message that cannot move fails alone', async () => {
  const { call, rejects, close } = setup();
  const { dlq, id } = await deadLettered(call, 'a');
  const { QueueUrl: other } = await call('CreateQueue', { QueueName: 'other' });
  await call('CreateQueue', { QueueName: 'f.fifo', Attributes: { FifoQueue: 'true' } });
  const { MessageId: plain } = await call('SendMessage', { QueueUrl: dlq, MessageBody: 'sent straight here' });
  const { MessageId: held } = await call('SendMessage', { QueueUrl: dlq, MessageBody: 'held' });
  await call('ReceiveMessage', { QueueUrl: dlq, MaxNumberOfMessages: 10, VisibilityTimeout: 0 });
  const r0 = await call('MoveMessagesById', { QueueUrl: dlq, MessageIds: [plain] });
  assert.equal(r0.Failed[0].Code, 'NoDeadLetterSource');
  // Hold one message; the other two are visible again.
  const got = (await call('ReceiveMessage', { QueueUrl: dlq, MaxNumberOfMessages: 10, VisibilityTimeout: 60 }))
    .Messages;
  for (const m of got)
    if (m.MessageId !== held)
      await call('ChangeMessageVisibilityById', { QueueUrl: dlq, MessageId: m.MessageId, VisibilityTimeout: 0 });
  const r = await call('MoveMessagesById', {
    QueueUrl: dlq,
    MessageIds: [id, plain, held, 'missing'],
    DestinationArn: arn('other'),
  });
  assert.deepEqual(r.Successful.map((s: { Id: string }) => s.Id).sort(), [id, plain].sort());
  assert.deepEqual(
    r.Failed.map((f: { Id: string; Code: string }) => [f.Id, f.Code]),
    [
      [held, 'MessageInFlight'],
      ['missing', 'MessageNotFound'],
    ],
  );
  assert.deepEqual(
    (await call('PeekMessages', { QueueUrl: other })).Messages.map((m: { Body: string }) => m.Body).sort(),
    ['poison', 'sent straight here'],
  );
  assert.deepEqual(
    (await call('PeekMessages', { QueueUrl: dlq })).Messages.map((m: { MessageId: string }) => m.MessageId),
    [held],
  );
  await rejects(
    call('MoveMessagesById', { QueueUrl: dlq, MessageIds: [held], DestinationArn: arn('f.fifo') }),
    'InvalidParameterValueException',
    /same type/,
  );
  await rejects(
    call('MoveMessagesById', { QueueUrl: dlq, MessageIds: [held], DestinationArn: arn('nowhere') }),
    'ResourceNotFoundException',
  );
  await rejects(
    call('MoveMessagesById', { QueueUrl: dlq, MessageIds: [held], DestinationArn: arn('a-dlq') }),
    'InvalidParameterValueException',
    /not be the source/,
  );
  await rejects(call('MoveMessagesById', { QueueUrl: dlq, MessageIds: [] }), 'EmptyBatchRequest');
  await rejects(
    call('MoveMessagesById', { QueueUrl: dlq, MessageIds: Array.from({ length: 11 }, (_, i) => `m${i}`) }),
    'TooManyEntriesInBatchRequest',
  );
  await rejects(call('MoveMessagesById', { QueueUrl: dlq, MessageIds: ['x', 'x'] }), 'BatchEntryIdsNotDistinct');
  await close();
});

test('MoveMessagesById on FIFO queues keeps the group and moves to the source queue', async () => {
  const { call, close } = setup();
  const { source, dlq, id } = await deadLettered(call, 'f', true);
  const r = await call('MoveMessagesById', { QueueUrl: dlq, MessageIds: [id] });
  assert.equal(r.Successful.length, 1);
  const [m] = (await call('ReceiveMessage', { QueueUrl: source, AttributeNames: ['All'] })).Messages;
  assert.equal(m.Body, 'poison');
  assert.equal(m.Attributes.MessageGroupId, 'g');
  await close();
});

test('GetDeadLetterBreakdown lists the top rejection reasons; PeekMessages CountOnly counts matches within its budget', async () => {
  const { call, close } = setup();
  const { QueueUrl: dlq } = await call('CreateQueue', { QueueName: 'd' });
  const { QueueUrl: q } = await call('CreateQueue', {
    QueueName: 's',
    Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arn('d'), maxReceiveCount: 5 }) },
  });
  const reasons = ['timeout', 'timeout', 'timeout', 'bad json', 'bad json', undefined];
  for (const reason of reasons) {
    await call('SendMessage', { QueueUrl: q, MessageBody: `m ${reason}` });
    const [m] = (await call('ReceiveMessage', { QueueUrl: q })).Messages;
    await call('RejectMessage', { QueueUrl: q, ReceiptHandle: m.ReceiptHandle, ...(reason && { Reason: reason }) });
  }
  await call('SendMessage', { QueueUrl: dlq, MessageBody: 'not rejected' });
  const b = await call('GetDeadLetterBreakdown', { QueueUrl: dlq });
  assert.deepEqual(b.ByRejectionReason, [
    { Reason: 'timeout', Count: 3 },
    { Reason: 'bad json', Count: 2 },
    { Reason: '', Count: 1 },
  ]);
  assert.equal(b.RejectionReasonsExamined, 7);
  assert.equal(b.RejectionReasonsComplete, true);

  assert.deepEqual(
    await call('PeekMessages', { QueueUrl: dlq, CountOnly: true, Filter: { BodyContains: 'timeout' } }),
    { Count: 3, Examined: 7 },
  );
  // A big queue: one request examines at most 1,000 messages and says where to go on.
  const { QueueUrl: big } = await call('CreateQueue', { QueueName: 'big' });
  for (let i = 0; i < 1_500; i += 10) {
    await call('SendMessageBatch', {
      QueueUrl: big,
      Entries: Array.from({ length: 10 }, (_, j) => ({
        Id: `e${j}`,
        MessageBody: (i + j) % 3 === 0 ? 'needle' : 'hay',
      })),
    });
  }
  const first = await call('PeekMessages', { QueueUrl: big, CountOnly: true, Filter: { BodyContains: 'needle' } });
  assert.equal(first.Count, 334);
  assert.equal(first.Examined, 1_000);
  assert.ok(first.NextToken, 'the count is "at least": the queue goes on');
  const rest = await call('PeekMessages', {
    QueueUrl: big,
    CountOnly: true,
    Filter: { BodyContains: 'needle' },
    NextToken: first.NextToken,
  });
  assert.deepEqual(rest, { Count: 166, Examined: 500 });
  await close();
});

test('MoveMessagesById leaves a message whose source queue is gone where it is', async () => {
  const { call, close } = setup();
  const { source, dlq, id } = await deadLettered(call, 'gone');
  await call('DeleteQueue', { QueueUrl: source });
  const r = await call('MoveMessagesById', { QueueUrl: dlq, MessageIds: [id] });
  assert.deepEqual(r.Successful, []);
  assert.equal(r.Failed[0].Code, 'NonExistentQueue');
  assert.match(
    r.Failed[0].Message,
    /arn:aws:sqs:us-east-1:000000000000:gone is not a queue of this account and region/,
  );
  assert.deepEqual(
    (await call('PeekMessages', { QueueUrl: dlq })).Messages.map((m: { MessageId: string }) => m.MessageId),
    [id],
  );
  await close();
});

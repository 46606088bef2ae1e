/** StartMessageMoveTask, ListMessageMoveTasks and CancelMessageMoveTask, on a manual clock. */
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import {
  CancelMessageMoveTaskCommand,
  CreateQueueCommand,
  DeleteQueueCommand,
  ListMessageMoveTasksCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  StartMessageMoveTaskCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { useServerProcess, type ServerProcess } from '../support/server-process.js';
import { assertSqsError, counts, createQueue, invalidParameterValue, rawJson } from './helpers.js';
import { arn, deadLetter, drain, latestTask, runToEnd, sourceOf, waitFor } from './dlq-helpers.js';

let server: ServerProcess;
let sqs: SQSClient;

useServerProcess({ storage: 'memory', manualClock: true }, (s) => {
  server = s;
  sqs = s.client();
});

const start = (SourceArn: string, extra: { DestinationArn?: string; MaxNumberOfMessagesPerSecond?: number } = {}) =>
  sqs.send(new StartMessageMoveTaskCommand({ SourceArn, ...extra }));
const cancel = (TaskHandle: string) => sqs.send(new CancelMessageMoveTaskCommand({ TaskHandle }));
const notFound = (message: string) => ({ name: 'ResourceNotFoundException', status: 404, message });
const handle = (taskId: string, sourceArn: string) =>
  Buffer.from(JSON.stringify({ taskId, sourceArn })).toString('base64');
const moved = async (dlq: string) => (await latestTask(sqs, arn(dlq)))?.ApproximateNumberOfMessagesMoved;

describe('errors', () => {
  before(async () => {
    await sourceOf(sqs, 'err-src', 'err-dlq');
    await createQueue(sqs, 'err-plain');
    await createQueue(sqs, 'err-dest.fifo', { FifoQueue: 'true' });
  });

  test('the source must exist and be some queue’s dead-letter queue', async () => {
    await assertSqsError(
      start(arn('err-plain')),
      invalidParameterValue('Source queue must be configured as a Dead Letter Queue.'),
    );
    await assertSqsError(
      start(arn('err-none')),
      notFound("The resource that you specified for the SourceArn parameter doesn't exist."),
    );
  });

  test('the destination must exist and be of the same type', async () => {
    await assertSqsError(
      start(arn('err-dlq'), { DestinationArn: `${arn('err-plain')}doesntexist` }),
      notFound("The resource that you specified for the DestinationArn parameter doesn't exist."),
    );
    await assertSqsError(
      start(arn('err-dlq'), { DestinationArn: arn('err-dest.fifo') }),
      invalidParameterValue(/same type/),
    );
  });

  test('MaxNumberOfMessagesPerSecond is 1 to 500', async () => {
    for (const rate of [0, 501]) {
      await assertSqsError(
        start(arn('err-dlq'), { MaxNumberOfMessagesPerSecond: rate }),
        invalidParameterValue(
          `Value ${rate} for parameter MaxNumberOfMessagesPerSecond is invalid. Reason: Must be between 1 and 500, if provided.`,
        ),
      );
    }
  });

  test('CancelMessageMoveTask checks the handle, its source and its task', async () => {
    await assertSqsError(cancel('foobared'), invalidParameterValue('Value for parameter TaskHandle is invalid.'));
    await assertSqsError(
      cancel(handle('6d5ee2ab-0000-4000-8000-000000000000', arn('err-none'))),
      notFound("The resource that you specified for the SourceArn parameter doesn't exist."),
    );
    await assertSqsError(
      cancel(handle('6d5ee2ab-0000-4000-8000-000000000000', arn('err-dlq'))),
      notFound('Task does not exist.'),
    );
  });

  test('ListMessageMoveTasks checks its source and MaxResults', async () => {
    await assertSqsError(
      sqs.send(new ListMessageMoveTasksCommand({ SourceArn: arn('err-none') })),
      notFound("The resource that you specified for the SourceArn parameter doesn't exist."),
    );
    await assertSqsError(
      sqs.send(new ListMessageMoveTasksCommand({ SourceArn: arn('err-dlq'), MaxResults: 11 })),
      invalidParameterValue(
        'Value 11 for parameter MaxResults is invalid. Reason: Must be between 1 and 10, if provided.',
      ),
    );
    assert.equal((await sqs.send(new ListMessageMoveTasksCommand({ SourceArn: arn('err-dlq') }))).Results, undefined);
  });
});

describe('moving messages', () => {
  test('without a destination each message returns to the queue it died in, as a new message', async () => {
    const a = await sourceOf(sqs, 'home-a', 'home-dlq');
    const b = await sourceOf(sqs, 'home-b', 'home-dlq');
    await deadLetter(sqs, a, ['a1', 'a2', 'a3']);
    await deadLetter(sqs, b, ['b1', 'b2']);
    const before = (await drain(sqs, `${server.url}/000000000000/home-dlq`)).map((m) => m.MessageId);
    await server.advanceClock(600_000); // the drain's receipts expire
    const now = await server.advanceClock(1);
    const { TaskHandle } = await start(arn('home-dlq'));
    const decoded = JSON.parse(Buffer.from(TaskHandle!, 'base64').toString('utf8'));
    assert.equal(decoded.sourceArn, arn('home-dlq'));
    assert.match(decoded.taskId, /^[0-9a-f-]{36}$/);
    const done = await waitFor(
      () => latestTask(sqs, arn('home-dlq')),
      (t) => t?.Status === 'COMPLETED',
      'completion',
    );
    assert.deepEqual(
      { ...done, StartedTimestamp: 0 },
      {
        ApproximateNumberOfMessagesMoved: 5,
        ApproximateNumberOfMessagesToMove: 5,
        SourceArn: arn('home-dlq'),
        StartedTimestamp: 0,
        Status: 'COMPLETED',
      },
    );
    assert.equal(done!.StartedTimestamp, now);
    const inA = await drain(sqs, a);
    const inB = await drain(sqs, b);
    assert.deepEqual(
      inA.map((m) => m.Body),
      ['a1', 'a2', 'a3'],
    );
    assert.deepEqual(
      inB.map((m) => m.Body),
      ['b1', 'b2'],
    );
    for (const m of [...inA, ...inB]) {
      assert.ok(!before.includes(m.MessageId), 'a new message id');
      assert.equal(m.Attributes!.SentTimestamp, String(now), 'a new enqueue time');
      assert.equal(m.Attributes!.ApproximateReceiveCount, '1');
      assert.equal(m.Attributes!.DeadLetterQueueSourceArn, undefined);
    }
    assert.equal(
      (await counts(sqs, `${server.url}/000000000000/home-dlq`)).visible +
        (await counts(sqs, `${server.url}/000000000000/home-dlq`)).inflight,
      0,
    );
  });

  test('with a destination, oldest first, and listed with its DestinationArn', async () => {
    const src = await sourceOf(sqs, 'dest-src', 'dest-dlq');
    const dest = await createQueue(sqs, 'dest-target');
    const bodies = Array.from({ length: 25 }, (_, i) => `m${String(i).padStart(2, '0')}`);
    await deadLetter(sqs, src, bodies);
    await start(arn('dest-dlq'), { DestinationArn: arn('dest-target') });
    const done = await waitFor(
      () => latestTask(sqs, arn('dest-dlq')),
      (t) => t?.Status === 'COMPLETED',
      'completion',
    );
    assert.equal(done!.DestinationArn, arn('dest-target'));
    assert.equal(done!.ApproximateNumberOfMessagesMoved, 25);
    assert.deepEqual(
      (await drain(sqs, dest)).map((m) => m.Body),
      bodies,
    );
  });
});

describe('the destination’s delay', () => {
  test('applies to redriven messages, as to any send', async () => {
    const src = await sourceOf(sqs, 'delay-src', 'delay-dlq');
    const dest = await createQueue(sqs, 'delay-dest', { DelaySeconds: '30' });
    await deadLetter(sqs, src, ['late']);
    await start(arn('delay-dlq'), { DestinationArn: arn('delay-dest') });
    await waitFor(
      () => latestTask(sqs, arn('delay-dlq')),
      (t) => t?.Status === 'COMPLETED',
      'completion',
    );
    assert.deepEqual(await counts(sqs, dest), { visible: 0, inflight: 0, delayed: 1 });
    await server.advanceClock(30_000);
    assert.deepEqual(
      (await drain(sqs, dest)).map((m) => m.Body),
      ['late'],
    );
  });
});

describe('FIFO', () => {
  test('redriven messages are new messages that keep their group and deduplication ids', async () => {
    await createQueue(sqs, 'ff-dlq.fifo', { FifoQueue: 'true' });
    const src = await createQueue(sqs, 'ff-src.fifo', {
      FifoQueue: 'true',
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arn('ff-dlq.fifo'), maxReceiveCount: 1 }),
    });
    const ids: string[] = [];
    for (const g of ['g1', 'g2']) {
      const out = await sqs.send(
        new SendMessageCommand({
          QueueUrl: src,
          MessageBody: `body-${g}`,
          MessageGroupId: g,
          MessageDeduplicationId: `d-${g}`,
        }),
      );
      ids.push(out.MessageId!);
    }
    for (let i = 0; i < 4; i++)
      await sqs.send(new ReceiveMessageCommand({ QueueUrl: src, MaxNumberOfMessages: 10, VisibilityTimeout: 0 }));
    assert.equal((await counts(sqs, `${server.url}/000000000000/ff-dlq.fifo`)).visible, 2);
    await start(arn('ff-dlq.fifo'));
    await waitFor(
      () => latestTask(sqs, arn('ff-dlq.fifo')),
      (t) => t?.Status === 'COMPLETED',
      'completion',
    );
    const back = await drain(sqs, src);
    assert.deepEqual(back.map((m) => m.Body).sort(), ['body-g1', 'body-g2']);
    for (const m of back) {
      const g = m.Body!.slice(5);
      assert.equal(m.Attributes!.MessageGroupId, g);
      // The dead-letter move made the message id its deduplication id; the redrive keeps it.
      assert.equal(m.Attributes!.MessageDeduplicationId, ids[g === 'g1' ? 0 : 1]);
      assert.ok(!ids.includes(m.MessageId!), 'a new message id');
    }
  });
});

describe('rate limit, cancel and one active task', () => {
  test('MaxNumberOfMessagesPerSecond holds on the server clock', async () => {
    const src = await sourceOf(sqs, 'rate-src', 'rate-dlq');
    await deadLetter(
      sqs,
      src,
      Array.from({ length: 30 }, (_, i) => `r${i}`),
    );
    await start(arn('rate-dlq'), { MaxNumberOfMessagesPerSecond: 5 });
    const running = await waitFor(
      () => latestTask(sqs, arn('rate-dlq')),
      (t) => t?.ApproximateNumberOfMessagesMoved === 5,
      'first batch',
    );
    assert.equal(running!.Status, 'RUNNING');
    assert.equal(running!.MaxNumberOfMessagesPerSecond, 5);
    assert.ok(running!.TaskHandle);
    for (let second = 1; second <= 4; second++) {
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(await moved('rate-dlq'), 5 * second, 'no progress while the server clock stands still');
      await server.advanceClock(1_000);
      await waitFor(
        () => moved('rate-dlq'),
        (n) => n === 5 * (second + 1),
        `second ${second}`,
      );
    }
    const done = await runToEnd(server, sqs, arn('rate-dlq'));
    assert.equal(done.Status, 'COMPLETED');
    assert.equal(done.ApproximateNumberOfMessagesMoved, 30);
  });

  test('cancel stops a task, keeps what moved, and frees the source for a new task', async () => {
    const src = await sourceOf(sqs, 'cancel-src', 'cancel-dlq');
    await deadLetter(
      sqs,
      src,
      Array.from({ length: 10 }, (_, i) => `c${i}`),
    );
    const { TaskHandle } = await start(arn('cancel-dlq'), { MaxNumberOfMessagesPerSecond: 1 });
    await waitFor(
      () => moved('cancel-dlq'),
      (n) => n === 1,
      'first message',
    );
    await assertSqsError(
      start(arn('cancel-dlq')),
      invalidParameterValue(
        'There is already a task running. Only one active task is allowed for a source queue arn at a given time.',
      ),
    );
    assert.deepEqual((await cancel(TaskHandle!)).ApproximateNumberOfMessagesMoved, 1);
    await server.advanceClock(5_000);
    const t = await latestTask(sqs, arn('cancel-dlq'));
    assert.equal(t!.Status, 'CANCELLED');
    assert.equal(t!.TaskHandle, undefined);
    assert.equal(t!.ApproximateNumberOfMessagesMoved, 1);
    assert.equal((await counts(sqs, `${server.url}/000000000000/cancel-dlq`)).visible, 9);
    await assertSqsError(cancel(TaskHandle!), invalidParameterValue(/Only a task in RUNNING status/));
    await start(arn('cancel-dlq'));
    await waitFor(
      () => latestTask(sqs, arn('cancel-dlq')),
      (x) => x?.Status === 'COMPLETED',
      'second task',
    );
    const both = await sqs.send(new ListMessageMoveTasksCommand({ SourceArn: arn('cancel-dlq'), MaxResults: 10 }));
    assert.deepEqual(
      both.Results!.map((r) => r.Status),
      ['COMPLETED', 'CANCELLED'],
      'newest first',
    );
  });

  test('a destination deleted mid-task fails the task with a reason and loses nothing', async () => {
    const src = await sourceOf(sqs, 'gone-src', 'gone-dlq');
    const { QueueUrl: dest } = await sqs.send(new CreateQueueCommand({ QueueName: 'gone-dest' }));
    await deadLetter(sqs, src, ['g0', 'g1', 'g2', 'g3']);
    await start(arn('gone-dlq'), { DestinationArn: arn('gone-dest'), MaxNumberOfMessagesPerSecond: 1 });
    await waitFor(
      () => moved('gone-dlq'),
      (n) => n === 1,
      'first message',
    );
    await sqs.send(new DeleteQueueCommand({ QueueUrl: dest }));
    const t = await runToEnd(server, sqs, arn('gone-dlq'));
    assert.equal(t.Status, 'FAILED');
    assert.equal(t.FailureReason, 'AWS.SimpleQueueService.NonExistentQueue');
    assert.equal(t.TaskHandle, undefined);
    assert.equal(t.ApproximateNumberOfMessagesMoved, 1);
    assert.deepEqual(
      (await drain(sqs, `${server.url}/000000000000/gone-dlq`)).map((m) => m.Body),
      ['g1', 'g2', 'g3'],
    );
  });

  test('a message larger than the destination takes fails the task there, as the send would, and stays', async () => {
    const src = await sourceOf(sqs, 'big-src', 'big-dlq');
    const dest = await createQueue(sqs, 'big-dest', { MaximumMessageSize: '1024' });
    const big = 'x'.repeat(2000);
    await deadLetter(sqs, src, ['small', big, 'after']);
    await start(arn('big-dlq'), { DestinationArn: arn('big-dest') });
    const t = await runToEnd(server, sqs, arn('big-dlq'));
    assert.equal(t.Status, 'FAILED');
    assert.equal(t.FailureReason, 'InvalidParameterValue');
    assert.equal(t.ApproximateNumberOfMessagesMoved, 1);
    assert.deepEqual(
      (await drain(sqs, dest)).map((m) => m.Body),
      ['small'],
    );
    assert.deepEqual(
      (await drain(sqs, `${server.url}/000000000000/big-dlq`)).map((m) => m.Body),
      [big, 'after'],
    );
  });
});

describe('selective redrive (extension)', () => {
  const startRaw = async (body: Record<string, unknown>) => {
    const res = await rawJson(server.url, 'AmazonSQS.StartMessageMoveTask', JSON.stringify(body));
    return res;
  };

  test('DryRun counts, a filter moves only the matching messages', async () => {
    const a = await sourceOf(sqs, 'sel-a', 'sel-dlq');
    const b = await sourceOf(sqs, 'sel-b', 'sel-dlq');
    await deadLetter(sqs, a, ['{"type":"order","n":1}', '{"type":"refund","n":2}', 'plain text order']);
    const cut = await server.advanceClock(10_000);
    await deadLetter(sqs, b, ['{"type":"order","n":3}']);
    const dry = async (Filter: Record<string, unknown>) => {
      const res = await startRaw({ SourceArn: arn('sel-dlq'), DryRun: true, Filter });
      assert.equal(res.status, 200, res.text);
      return res.json.ApproximateNumberOfMessagesToMove;
    };
    assert.equal(await dry({}), 4);
    assert.equal(await dry({ BodyContains: 'order' }), 3);
    assert.equal(await dry({ BodyJsonPath: '$.type', Equals: 'order' }), 2);
    assert.equal(await dry({ BodyJsonPath: '$.n' }), 3);
    assert.equal(await dry({ DeadLetterQueueSourceArn: arn('sel-b') }), 1);
    assert.equal(await dry({ DeadLetteredAfter: cut }), 1);
    assert.equal(await dry({ DeadLetteredBefore: cut, BodyContains: 'order' }), 2);
    assert.equal(await latestTask(sqs, arn('sel-dlq')), undefined, 'a dry run starts nothing');

    const bad = await startRaw({ SourceArn: arn('sel-dlq'), Filter: { Nope: 1 } });
    assert.equal(bad.status, 400);
    assert.match(String(bad.json.message), /Unknown field Nope/);

    const res = await startRaw({ SourceArn: arn('sel-dlq'), Filter: { BodyJsonPath: '$.type', Equals: 'order' } });
    assert.equal(res.status, 200, res.text);
    const t = await waitFor(
      () => latestTask(sqs, arn('sel-dlq')),
      (x) => x?.Status === 'COMPLETED',
      'completion',
    );
    assert.equal(t!.ApproximateNumberOfMessagesMoved, 2);
    assert.equal(t!.ApproximateNumberOfMessagesToMove, 2, 'the matching messages, not the whole queue');
    assert.deepEqual(
      (await drain(sqs, a)).map((m) => m.Body),
      ['{"type":"order","n":1}'],
    );
    assert.deepEqual(
      (await drain(sqs, b)).map((m) => m.Body),
      ['{"type":"order","n":3}'],
    );
    assert.equal((await counts(sqs, `${server.url}/000000000000/sel-dlq`)).visible, 2);
  });

  test('filter by message attribute', async () => {
    const src = await sourceOf(sqs, 'attr-src', 'attr-dlq');
    for (const tenant of ['acme', 'globex', 'acme']) {
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: src,
          MessageBody: tenant,
          MessageAttributes: { tenant: { DataType: 'String', StringValue: tenant } },
        }),
      );
    }
    for (let i = 0; i < 2; i++)
      await sqs.send(new ReceiveMessageCommand({ QueueUrl: src, MaxNumberOfMessages: 10, VisibilityTimeout: 0 }));
    const res = await startRaw({
      SourceArn: arn('attr-dlq'),
      DryRun: true,
      Filter: { MessageAttribute: { Name: 'tenant', Value: 'acme' } },
    });
    assert.equal(res.json.ApproximateNumberOfMessagesToMove, 2);
  });
});

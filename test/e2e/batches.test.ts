/** SendMessageBatch, DeleteMessageBatch and ChangeMessageVisibilityBatch on standard queues. */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type SendMessageBatchRequestEntry,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { useServerProcess, type ServerProcess } from '../support/server-process.js';
import { assertSqsError, counts, createQueue, queueDoesNotExist, receive, type ExpectedError } from './helpers.js';

let server: ServerProcess;
let sqs: SQSClient;

useServerProcess({ storage: 'sqlite', manualClock: true }, (s) => {
  server = s;
  sqs = s.client();
});

const sendBatch = (QueueUrl: string, Entries: SendMessageBatchRequestEntry[]) =>
  sqs.send(new SendMessageBatchCommand({ QueueUrl, Entries }));
const entries = (n: number, prefix = 'e'): SendMessageBatchRequestEntry[] =>
  Array.from({ length: n }, (_, i) => ({ Id: `${prefix}${i}`, MessageBody: `body ${i}` }));

const tooMany = (n: number): ExpectedError => ({
  name: 'TooManyEntriesInBatchRequest',
  code: 'AWS.SimpleQueueService.TooManyEntriesInBatchRequest',
  status: 400,
  message: `Maximum number of entries per request are 10. You have sent ${n}.`,
});
const emptyBatch = (entryShape: string): ExpectedError => ({
  name: 'EmptyBatchRequest',
  code: 'AWS.SimpleQueueService.EmptyBatchRequest',
  status: 400,
  message: `There should be at least one ${entryShape} in the request.`,
});
const badId: ExpectedError = {
  name: 'InvalidBatchEntryId',
  code: 'AWS.SimpleQueueService.InvalidBatchEntryId',
  status: 400,
  message:
    'A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.',
};
const notDistinct: ExpectedError = {
  name: 'BatchEntryIdsNotDistinct',
  code: 'AWS.SimpleQueueService.BatchEntryIdsNotDistinct',
  status: 400,
};

async function sendAndReceiveAll(QueueUrl: string, n: number): Promise<string[]> {
  await sendBatch(QueueUrl, entries(n));
  const got = await receive(sqs, QueueUrl, { MaxNumberOfMessages: 10 });
  assert.equal(got.length, n);
  return got.map((m) => m.ReceiptHandle!);
}

describe('SendMessageBatch', () => {
  test('sends up to 10 entries, each with its id, message id and MD5s', async () => {
    const url = await createQueue(sqs, 'batch-ten');
    const batch = entries(10);
    batch[0] = { ...batch[0]!, MessageAttributes: { k: { DataType: 'String', StringValue: 'x' } } };
    const out = await sendBatch(url, batch);
    assert.equal(out.Failed, undefined);
    assert.deepEqual(out.Successful!.map((s) => s.Id).sort(), batch.map((e) => e.Id).sort());
    const first = out.Successful!.find((s) => s.Id === 'e0')!;
    assert.equal(first.MD5OfMessageAttributes, 'a45daa70926828a2f0a1db3418e6feb4');
    // Only entries with attributes carry MD5OfMessageAttributes.
    assert.equal(out.Successful!.find((s) => s.Id === 'e1')!.MD5OfMessageAttributes, undefined);
    assert.equal(new Set(out.Successful!.map((s) => s.MessageId)).size, 10);
    assert.equal((await counts(sqs, url)).visible, 10);
  });

  test('whole-request errors store nothing', async () => {
    const url = await createQueue(sqs, 'batch-rejected');
    await assertSqsError(sendBatch(url, []), emptyBatch('SendMessageBatchRequestEntry'));
    await assertSqsError(sendBatch(url, entries(11)), tooMany(11));
    await assertSqsError(sendBatch(url, entries(20)), tooMany(20));
    await assertSqsError(sendBatch(url, [...entries(2), { Id: 'e0', MessageBody: 'dup' }]), notDistinct);
    for (const Id of ['message:1', '', 'x'.repeat(81), 'dot.id']) {
      await assertSqsError(
        sendBatch(url, [
          { Id: 'ok', MessageBody: 'fine' },
          { Id, MessageBody: 'bad id' },
        ]),
        badId,
      );
    }
    assert.deepEqual(await counts(sqs, url), { visible: 0, inflight: 0, delayed: 0 });
    // 80 characters, hyphens and underscores are fine.
    const out = await sendBatch(url, [{ Id: `${'x'.repeat(78)}-_`, MessageBody: 'long id' }]);
    assert.equal(out.Successful?.length, 1);
  });

  test('per-entry failures: the batch answers 200 and stores the good entries', async () => {
    const url = await createQueue(sqs, 'batch-partial', { MaximumMessageSize: '1024' });
    const out = await sendBatch(url, [
      { Id: 'fits', MessageBody: 'a'.repeat(1024) },
      { Id: 'big', MessageBody: 'a'.repeat(1025) },
      { Id: 'badchar', MessageBody: 'bad \x01 char' },
      { Id: 'baddelay', MessageBody: 'x', DelaySeconds: 901 },
    ]);
    assert.deepEqual(
      out.Successful!.map((s) => [s.Id, s.MD5OfMessageBody]),
      [['fits', 'c9a34cfc85d982698c6ac89f76071abd']],
    );
    const failed = Object.fromEntries(out.Failed!.map((f) => [f.Id, f]));
    assert.deepEqual(failed.big, {
      Id: 'big',
      Code: 'InvalidParameterValue',
      SenderFault: true,
      Message: 'One or more parameters cannot be validated. Reason: Message must be shorter than 1024 bytes.',
    });
    assert.equal(failed.badchar!.Code, 'InvalidMessageContents');
    assert.equal(failed.badchar!.SenderFault, true);
    assert.equal(failed.baddelay!.Code, 'InvalidParameterValue');
    assert.match(failed.baddelay!.Message!, /DelaySeconds/);
    assert.equal((await counts(sqs, url)).visible, 1);
  });

  test('one invalid character fails only its entry', async () => {
    const url = await createQueue(sqs, 'batch-one-bad');
    const batch = entries(10);
    batch[4] = { Id: 'e4', MessageBody: 'bad \x01' };
    const out = await sendBatch(url, batch);
    assert.equal(out.Successful!.length, 9);
    assert.deepEqual(
      out.Failed!.map((f) => [f.Id, f.Code]),
      [['e4', 'InvalidMessageContents']],
    );
    assert.equal((await counts(sqs, url)).visible, 9);
  });

  test('the whole request may carry at most 1 MiB: BatchRequestTooLong', async () => {
    const url = await createQueue(sqs, 'batch-too-long');
    const attr = { k: { DataType: 'String', StringValue: 'x' } }; // 8 bytes
    await assertSqsError(
      sendBatch(url, [
        { Id: 'big', MessageBody: 'a'.repeat(1_048_568), MessageAttributes: attr },
        { Id: 'one', MessageBody: 'a' },
      ]),
      {
        name: 'BatchRequestTooLong',
        code: 'AWS.SimpleQueueService.BatchRequestTooLong',
        status: 400,
        message: 'Batch requests cannot be longer than 1048576 bytes. You have sent 1048577 bytes.',
      },
    );
    assert.equal((await counts(sqs, url)).visible, 0);
    const out = await sendBatch(url, [
      { Id: 'half1', MessageBody: 'a'.repeat(524_288) },
      { Id: 'half2', MessageBody: 'b'.repeat(524_280), MessageAttributes: attr },
    ]);
    assert.equal(out.Successful!.length, 2);
  });

  test('per-entry DelaySeconds', async () => {
    const url = await createQueue(sqs, 'batch-delay');
    await sendBatch(url, [
      { Id: 'now', MessageBody: 'now' },
      { Id: 'later', MessageBody: 'later', DelaySeconds: 30 },
    ]);
    assert.deepEqual(await counts(sqs, url), { visible: 1, inflight: 0, delayed: 1 });
    await server.advanceClock(30_000);
    assert.deepEqual(await counts(sqs, url), { visible: 2, inflight: 0, delayed: 0 });
  });

  test('QueueDoesNotExist for a missing queue', async () => {
    await assertSqsError(sendBatch(`${server.url}/000000000000/nope`, entries(1)), queueDoesNotExist);
  });
});

describe('DeleteMessageBatch', () => {
  test('deletes each entry; bad handles fail per entry', async () => {
    const url = await createQueue(sqs, 'delbatch');
    const handles = await sendAndReceiveAll(url, 3);
    const out = await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: url,
        Entries: [
          { Id: 'a', ReceiptHandle: handles[0]! },
          { Id: 'b', ReceiptHandle: handles[1]! },
          { Id: 'bad', ReceiptHandle: 'garbage' },
        ],
      }),
    );
    assert.deepEqual(out.Successful!.map((s) => s.Id).sort(), ['a', 'b']);
    assert.deepEqual(out.Failed, [
      {
        Id: 'bad',
        Code: 'ReceiptHandleIsInvalid',
        SenderFault: true,
        Message: 'The input receipt handle "garbage" is not a valid receipt handle.',
      },
    ]);
    assert.deepEqual(await counts(sqs, url), { visible: 0, inflight: 1, delayed: 0 });
  });

  test('whole-request errors delete nothing', async () => {
    const url = await createQueue(sqs, 'delbatch-rejected');
    const handles = await sendAndReceiveAll(url, 2);
    const del = (Entries: { Id: string; ReceiptHandle: string }[]) =>
      sqs.send(new DeleteMessageBatchCommand({ QueueUrl: url, Entries }));
    await assertSqsError(del([]), emptyBatch('DeleteMessageBatchRequestEntry'));
    await assertSqsError(
      del(Array.from({ length: 11 }, (_, i) => ({ Id: `i${i}`, ReceiptHandle: handles[0]! }))),
      tooMany(11),
    );
    await assertSqsError(
      del([
        { Id: 'x', ReceiptHandle: handles[0]! },
        { Id: 'x', ReceiptHandle: handles[1]! },
      ]),
      notDistinct,
    );
    for (const Id of ['', 'testLongId'.repeat(10), 'invalid:id']) {
      await assertSqsError(
        del([
          { Id: 'ok', ReceiptHandle: handles[0]! },
          { Id, ReceiptHandle: 'testHandle1' },
        ]),
        badId,
      );
    }
    assert.deepEqual(await counts(sqs, url), { visible: 0, inflight: 2, delayed: 0 });
  });
});

describe('ChangeMessageVisibilityBatch', () => {
  test('changes each entry; bad entries fail alone', async () => {
    const url = await createQueue(sqs, 'cmvbatch');
    const handles = await sendAndReceiveAll(url, 4);
    await sqs.send(
      new DeleteMessageBatchCommand({ QueueUrl: url, Entries: [{ Id: 'd', ReceiptHandle: handles[3]! }] }),
    );
    const out = await sqs.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: url,
        Entries: [
          { Id: 'zero', ReceiptHandle: handles[0]!, VisibilityTimeout: 0 },
          { Id: 'long', ReceiptHandle: handles[1]!, VisibilityTimeout: 600 },
          { Id: 'toolong', ReceiptHandle: handles[2]!, VisibilityTimeout: 43_200 },
          { Id: 'deleted', ReceiptHandle: handles[3]!, VisibilityTimeout: 10 },
          { Id: 'bad', ReceiptHandle: 'garbage', VisibilityTimeout: 10 },
        ],
      }),
    );
    assert.deepEqual(out.Successful!.map((s) => s.Id).sort(), ['long', 'zero']);
    const failed = Object.fromEntries(out.Failed!.map((f) => [f.Id, f]));
    assert.deepEqual(Object.keys(failed).sort(), ['bad', 'deleted', 'toolong']);
    assert.equal(failed.bad!.Code, 'ReceiptHandleIsInvalid');
    assert.equal(failed.deleted!.Code, 'InvalidParameterValue');
    assert.match(
      failed.deleted!.Message!,
      /Message does not exist or is not available for visibility timeout change\.$/,
    );
    assert.equal(failed.toolong!.Code, 'InvalidParameterValue');
    assert.match(failed.toolong!.Message!, /beyond the limit \[43200 seconds\]/);
    for (const f of out.Failed!) assert.equal(f.SenderFault, true);
    // zero is visible now; long stays hidden for 600 s; toolong keeps its 30 s.
    assert.equal((await receive(sqs, url, { MaxNumberOfMessages: 10, VisibilityTimeout: 1_000 })).length, 1);
    await server.advanceClock(30_000);
    assert.equal((await receive(sqs, url, { MaxNumberOfMessages: 10, VisibilityTimeout: 1_000 })).length, 1);
    await server.advanceClock(570_000);
    assert.equal((await receive(sqs, url, { MaxNumberOfMessages: 10 })).length, 1);
  });

  test('whole-request errors change nothing', async () => {
    const url = await createQueue(sqs, 'cmvbatch-rejected');
    const [h] = await sendAndReceiveAll(url, 1);
    const change = (Entries: { Id: string; ReceiptHandle: string; VisibilityTimeout: number }[]) =>
      sqs.send(new ChangeMessageVisibilityBatchCommand({ QueueUrl: url, Entries }));
    await assertSqsError(change([]), emptyBatch('ChangeMessageVisibilityBatchRequestEntry'));
    await assertSqsError(
      change(Array.from({ length: 20 }, (_, i) => ({ Id: `i${i}`, ReceiptHandle: h!, VisibilityTimeout: 0 }))),
      tooMany(20),
    );
    await assertSqsError(
      change([
        { Id: 'x', ReceiptHandle: h!, VisibilityTimeout: 0 },
        { Id: 'x', ReceiptHandle: h!, VisibilityTimeout: 0 },
      ]),
      notDistinct,
    );
    await assertSqsError(
      change([
        { Id: 'ok', ReceiptHandle: h!, VisibilityTimeout: 0 },
        { Id: 'no:colons', ReceiptHandle: h!, VisibilityTimeout: 0 },
      ]),
      badId,
    );
    assert.deepEqual(await counts(sqs, url), { visible: 0, inflight: 1, delayed: 0 });
  });
});

test('SendMessage and a batch share the MD5 of the same body', async () => {
  const url = await createQueue(sqs, 'batch-md5');
  const single = await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'a'.repeat(2040) }));
  const batch = await sendBatch(url, [{ Id: '1', MessageBody: 'a'.repeat(2040) }]);
  assert.equal(single.MD5OfMessageBody, 'f44facf5a7ee0af446ecf3e0f854441e');
  assert.equal(batch.Successful![0]!.MD5OfMessageBody, single.MD5OfMessageBody);
});

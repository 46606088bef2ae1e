/** Visibility timeouts, ChangeMessageVisibility, DeleteMessage and retention on standard queues. */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { useServerProcess, type ServerProcess } from '../support/server-process.js';
import { assertSqsError, counts, createQueue, invalidParameterValue, queueDoesNotExist, receive } from './helpers.js';

let server: ServerProcess;
let sqs: SQSClient;

useServerProcess({ storage: 'sqlite', manualClock: true }, (s) => {
  server = s;
  sqs = s.client();
});

/** Sends one message and receives it; returns its receipt handle. */
async function sendAndReceive(QueueUrl: string, body = 'x', VisibilityTimeout?: number): Promise<string> {
  await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: body }));
  const [m] = await receive(sqs, QueueUrl, { VisibilityTimeout });
  assert.equal(m?.Body, body);
  return m!.ReceiptHandle!;
}

const changeVisibility = (QueueUrl: string, ReceiptHandle: string, VisibilityTimeout: number) =>
  sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl, ReceiptHandle, VisibilityTimeout }));
const deleteMessage = (QueueUrl: string, ReceiptHandle: string) =>
  sqs.send(new DeleteMessageCommand({ QueueUrl, ReceiptHandle }));

const beyond12h = (timeout: number) =>
  invalidParameterValue(
    `Value ${timeout} for parameter VisibilityTimeout is invalid. Reason: Total VisibilityTimeout for the message is beyond the limit [43200 seconds]`,
  );

describe('visibility timeout', () => {
  test('a received message is hidden for the queue VisibilityTimeout', async () => {
    const url = await createQueue(sqs, 'vt-queue', { VisibilityTimeout: '20' });
    await sendAndReceive(url);
    assert.deepEqual(await receive(sqs, url), []);
    await server.advanceClock(19_999);
    assert.deepEqual(await receive(sqs, url), []);
    await server.advanceClock(1);
    assert.equal((await receive(sqs, url)).length, 1);
  });

  test('ReceiveMessage VisibilityTimeout overrides the queue value', async () => {
    const url = await createQueue(sqs, 'vt-override');
    await sendAndReceive(url, 'x', 5);
    await server.advanceClock(4_999);
    assert.deepEqual(await receive(sqs, url), []);
    await server.advanceClock(1);
    assert.equal((await receive(sqs, url)).length, 1);
  });
});

describe('ChangeMessageVisibility', () => {
  test('counts from the moment of the call', async () => {
    const url = await createQueue(sqs, 'cmv-from-call');
    const handle = await sendAndReceive(url);
    await server.advanceClock(20_000);
    await changeVisibility(url, handle, 30);
    await server.advanceClock(29_999); // 49.999 s after the receive, past its original 30 s
    assert.deepEqual(await receive(sqs, url), []);
    await server.advanceClock(1);
    assert.equal((await receive(sqs, url)).length, 1);
  });

  test('0 makes the message visible at once; a later receive gets a new handle', async () => {
    const url = await createQueue(sqs, 'cmv-zero');
    const handle = await sendAndReceive(url);
    await changeVisibility(url, handle, 0);
    const [m] = await receive(sqs, url);
    assert.ok(m);
    assert.notEqual(m.ReceiptHandle, handle);
  });

  test('applies to that receipt only', async () => {
    const url = await createQueue(sqs, 'cmv-one-receipt');
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'a' }));
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'b' }));
    const got = await receive(sqs, url, { MaxNumberOfMessages: 10 });
    assert.equal(got.length, 2);
    await changeVisibility(url, got[0]!.ReceiptHandle!, 0);
    const again = await receive(sqs, url, { MaxNumberOfMessages: 10 });
    assert.deepEqual(
      again.map((m) => m.Body),
      [got[0]!.Body],
    );
    assert.deepEqual(await receive(sqs, url), [], 'the other message keeps its own timeout');
  });

  test('accepts an older receipt handle of the message on a standard queue, as SQS does', async () => {
    const url = await createQueue(sqs, 'cmv-older-receipt');
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'm' }));
    const [first] = await receive(sqs, url, { VisibilityTimeout: 0 });
    const [second] = await receive(sqs, url, { VisibilityTimeout: 3 });
    assert.notEqual(second!.ReceiptHandle, first!.ReceiptHandle);
    assert.deepEqual(await receive(sqs, url), [], 'hidden by the second receive');
    await changeVisibility(url, first!.ReceiptHandle!, 0);
    assert.deepEqual(
      (await receive(sqs, url)).map((m) => m.Body),
      ['m'],
      'receivable at once',
    );
  });

  test('works after the timeout expired on a standard queue, hiding the message again', async () => {
    const url = await createQueue(sqs, 'cmv-expired');
    const handle = await sendAndReceive(url, 'x', 1);
    await server.advanceClock(2_000);
    await changeVisibility(url, handle, 60);
    assert.deepEqual(await counts(sqs, url), { visible: 0, inflight: 1, delayed: 0 });
  });

  test('never beyond 12 hours since the receive', async () => {
    const url = await createQueue(sqs, 'cmv-12h');
    const handle = await sendAndReceive(url);
    await assertSqsError(changeVisibility(url, handle, 43_200), beyond12h(43_200));
    await changeVisibility(url, handle, 21_600); // 6 h
    await server.advanceClock(6 * 3600_000 - 60_000); // 5 h 59 min
    await changeVisibility(url, handle, 21_000);
    await server.advanceClock(5 * 3600_000); // 10 h 59 min since the receive
    await assertSqsError(changeVisibility(url, handle, 3_700), beyond12h(3_700));
    await changeVisibility(url, handle, 3_500);
    // The rejected calls left the last accepted timeout in place.
    await server.advanceClock(3_499_000);
    assert.deepEqual(await receive(sqs, url), []);
    await server.advanceClock(1_000);
    assert.equal((await receive(sqs, url)).length, 1);
  });

  test('VisibilityTimeout must be within 0..43200', async () => {
    const url = await createQueue(sqs, 'cmv-range');
    const handle = await sendAndReceive(url);
    await assertSqsError(changeVisibility(url, handle, 43_201), invalidParameterValue(/VisibilityTimeout/));
    await assertSqsError(changeVisibility(url, handle, -1), invalidParameterValue(/VisibilityTimeout/));
  });

  test('a deleted message is InvalidParameterValue', async () => {
    const url = await createQueue(sqs, 'cmv-deleted');
    const handle = await sendAndReceive(url);
    await deleteMessage(url, handle);
    await assertSqsError(
      changeVisibility(url, handle, 42),
      invalidParameterValue(
        `Value ${handle} for parameter ReceiptHandle is invalid. Reason: Message does not exist or is not available for visibility timeout change.`,
      ),
    );
  });

  test('an invalid receipt handle is ReceiptHandleIsInvalid', async () => {
    const url = await createQueue(sqs, 'cmv-invalid');
    await assertSqsError(changeVisibility(url, 'INVALID', 10), {
      name: 'ReceiptHandleIsInvalid',
      status: 404,
      message: 'The input receipt handle "INVALID" is not a valid receipt handle.',
    });
  });
});

describe('DeleteMessage', () => {
  test('deletes the message; deleting again succeeds', async () => {
    const url = await createQueue(sqs, 'del-twice');
    const handle = await sendAndReceive(url);
    for (let i = 0; i < 3; i++) await deleteMessage(url, handle);
    assert.deepEqual(await counts(sqs, url), { visible: 0, inflight: 0, delayed: 0 });
  });

  test('an old receipt handle still deletes on a standard queue', async () => {
    const url = await createQueue(sqs, 'del-old');
    const old = await sendAndReceive(url, 'x', 1);
    await server.advanceClock(2_000);
    const [again] = await receive(sqs, url);
    assert.notEqual(again!.ReceiptHandle, old);
    await deleteMessage(url, old);
    assert.deepEqual(await counts(sqs, url), { visible: 0, inflight: 0, delayed: 0 });
    await server.advanceClock(60_000);
    assert.deepEqual(await receive(sqs, url), []);
  });

  test('an invalid receipt handle is ReceiptHandleIsInvalid, and nothing is deleted', async () => {
    const url = await createQueue(sqs, 'del-invalid');
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'stays' }));
    await assertSqsError(deleteMessage(url, 'garbage'), {
      name: 'ReceiptHandleIsInvalid',
      status: 404,
      message: 'The input receipt handle "garbage" is not a valid receipt handle.',
    });
    // A real handle of another queue is not valid here either.
    const other = await createQueue(sqs, 'del-invalid-other');
    const foreign = await sendAndReceive(other);
    await assertSqsError(deleteMessage(url, foreign), { name: 'ReceiptHandleIsInvalid', status: 404 });
    assert.equal((await counts(sqs, url)).visible, 1);
    assert.equal((await counts(sqs, other)).inflight, 1);
  });

  test('QueueDoesNotExist for a missing queue', async () => {
    const url = await createQueue(sqs, 'del-missing');
    const handle = await sendAndReceive(url);
    await assertSqsError(deleteMessage(`${server.url}/000000000000/del-nope`, handle), queueDoesNotExist);
  });
});

describe('retention', () => {
  test('a message past MessageRetentionPeriod is gone, in flight or not', async () => {
    const url = await createQueue(sqs, 'retention', { MessageRetentionPeriod: '60' });
    const inflight = await sendAndReceive(url, 'in flight', 300);
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'waiting' }));
    await server.advanceClock(59_000);
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'young' }));
    assert.deepEqual(await counts(sqs, url), { visible: 2, inflight: 1, delayed: 0 });
    await server.advanceClock(2_000);
    // Expired messages are never received, even before the sweep has run.
    assert.deepEqual(
      (await receive(sqs, url, { MaxNumberOfMessages: 10, VisibilityTimeout: 0 })).map((m) => m.Body),
      ['young'],
    );
    let c = await counts(sqs, url);
    for (let i = 0; i < 20 && c.visible + c.inflight > 1; i++) {
      await server.advanceClock(1_000);
      c = await counts(sqs, url);
    }
    assert.deepEqual(c, { visible: 1, inflight: 0, delayed: 0 });
    // The stale handle of the expired in-flight message still "deletes".
    await deleteMessage(url, inflight);
  });
});

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SetQueueAttributesCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { useServerProcess, type ServerProcess } from '../support/server-process.js';

let server: ServerProcess;
let sqs: SQSClient;
let n = 0;
useServerProcess({ storage: 'sqlite', manualClock: true }, (s) => {
  server = s;
  sqs = s.client();
});

async function fifoQueue(attributes: Record<string, string> = {}): Promise<string> {
  const r = await sqs.send(
    new CreateQueueCommand({ QueueName: `f${++n}.fifo`, Attributes: { FifoQueue: 'true', ...attributes } }),
  );
  return r.QueueUrl!;
}

async function rejects(p: Promise<unknown>, code: string, message?: string | RegExp, status = 400) {
  await assert.rejects(p, (e: any) => {
    assert.equal(e.Code ?? e.name, code);
    assert.equal(e.$metadata.httpStatusCode, status);
    if (typeof message === 'string') assert.equal(e.message, message);
    else if (message) assert.match(e.message, message);
    return true;
  });
}

describe('creating FIFO queues', () => {
  test('a FIFO queue needs both the .fifo suffix and FifoQueue=true', async () => {
    await rejects(
      sqs.send(new CreateQueueCommand({ QueueName: 'nosuffix', Attributes: { FifoQueue: 'true' } })),
      'InvalidParameterValue',
    );
    await rejects(sqs.send(new CreateQueueCommand({ QueueName: 'suffix-only.fifo' })), 'InvalidParameterValue');
  });

  test('attributes come back with FIFO defaults', async () => {
    const QueueUrl = await fifoQueue({ ContentBasedDeduplication: 'true' });
    const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['All'] }));
    assert.equal(Attributes!.FifoQueue, 'true');
    assert.equal(Attributes!.ContentBasedDeduplication, 'true');
    assert.equal(Attributes!.DeduplicationScope, 'queue');
    assert.equal(Attributes!.FifoThroughputLimit, 'perQueue');
  });

  test('the queue type cannot change, and perMessageGroupId needs messageGroup scope', async () => {
    const QueueUrl = await fifoQueue();
    await rejects(
      sqs.send(new SetQueueAttributesCommand({ QueueUrl, Attributes: { FifoQueue: 'false' } })),
      'InvalidAttributeValue',
      'Invalid value for the parameter FifoQueue. Reason: Modifying queue type is not supported.',
    );
    await rejects(
      sqs.send(new SetQueueAttributesCommand({ QueueUrl, Attributes: { FifoThroughputLimit: 'perMessageGroupId' } })),
      'InvalidAttributeValue',
    );
    await sqs.send(
      new SetQueueAttributesCommand({
        QueueUrl,
        Attributes: { DeduplicationScope: 'messageGroup', FifoThroughputLimit: 'perMessageGroupId' },
      }),
    );
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['FifoThroughputLimit'] }),
    );
    assert.equal(Attributes!.FifoThroughputLimit, 'perMessageGroupId');
  });

  test('FIFO attributes on a standard queue are unknown', async () => {
    await rejects(
      sqs.send(new CreateQueueCommand({ QueueName: `std${++n}`, Attributes: { ContentBasedDeduplication: 'true' } })),
      'InvalidAttributeName',
    );
  });
});

describe('sending to FIFO queues', () => {
  test('MessageGroupId is required: MissingParameter alone, InvalidParameterValue for the whole batch', async () => {
    const QueueUrl = await fifoQueue({ ContentBasedDeduplication: 'true' });
    await rejects(
      sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'x' })),
      'MissingParameter',
      'The request must contain the parameter MessageGroupId.',
    );
    await rejects(
      sqs.send(
        new SendMessageBatchCommand({
          QueueUrl,
          Entries: [
            { Id: 'a', MessageBody: 'x', MessageGroupId: 'g' },
            { Id: 'b', MessageBody: 'y' },
          ],
        }),
      ),
      'InvalidParameterValue',
      'The request must contain the parameter MessageGroupId.',
    );
    const r = await sqs.send(new ReceiveMessageCommand({ QueueUrl }));
    assert.equal(r.Messages, undefined, 'the failed batch stored nothing');
  });

  test('a deduplication id is required unless content-based deduplication is on', async () => {
    const QueueUrl = await fifoQueue();
    await rejects(
      sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'x', MessageGroupId: 'g' })),
      'InvalidParameterValue',
      'The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly',
    );
  });

  test('ids longer than 128 characters or with other characters are rejected', async () => {
    const QueueUrl = await fifoQueue({ ContentBasedDeduplication: 'true' });
    const long = 'a'.repeat(129);
    await rejects(
      sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'x', MessageGroupId: long })),
      'InvalidParameterValue',
      `Value ${long} for parameter MessageGroupId is invalid. Reason: MessageGroupId can only include alphanumeric and punctuation characters. 1 to 128 in length.`,
    );
    await rejects(
      sqs.send(
        new SendMessageCommand({
          QueueUrl,
          MessageBody: 'x',
          MessageGroupId: 'g',
          MessageDeduplicationId: 'has space',
        }),
      ),
      'InvalidParameterValue',
    );
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'x', MessageGroupId: 'a'.repeat(128) }));
  });

  test('a per-message delay is rejected, zero is accepted', async () => {
    const QueueUrl = await fifoQueue({ ContentBasedDeduplication: 'true' });
    await rejects(
      sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'x', MessageGroupId: 'g', DelaySeconds: 2 })),
      'InvalidParameterValue',
      'Value 2 for parameter DelaySeconds is invalid. Reason: The request include parameter that is not valid for this queue type.',
    );
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'x', MessageGroupId: 'g', DelaySeconds: 0 }));
  });

  test('a deduplication id on a standard queue is rejected', async () => {
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: `std${++n}` }));
    await rejects(
      sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'x', MessageDeduplicationId: 'd' })),
      'InvalidParameterValue',
    );
  });

  test('sequence numbers grow strictly, on send and on receive', async () => {
    const QueueUrl = await fifoQueue({ ContentBasedDeduplication: 'true' });
    const a = await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'one', MessageGroupId: 'g' }));
    const b = await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'two', MessageGroupId: 'g' }));
    assert.match(a.SequenceNumber!, /^\d{20}$/);
    assert.ok(BigInt(b.SequenceNumber!) > BigInt(a.SequenceNumber!));
    const r = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, MessageSystemAttributeNames: ['All'] }),
    );
    assert.deepEqual(
      r.Messages!.map((m) => m.Attributes!.SequenceNumber),
      [a.SequenceNumber, b.SequenceNumber],
    );
    assert.deepEqual(
      r.Messages!.map((m) => m.Attributes!.MessageGroupId),
      ['g', 'g'],
    );
    assert.equal(r.Messages![0]!.Attributes!.MessageDeduplicationId!.length, 64, 'SHA-256 of the body');
  });

  test('the queue-level delay applies to FIFO messages', async () => {
    const QueueUrl = await fifoQueue({ ContentBasedDeduplication: 'true', DelaySeconds: '10' });
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'later', MessageGroupId: 'g' }));
    assert.equal((await sqs.send(new ReceiveMessageCommand({ QueueUrl }))).Messages, undefined);
    await server.advanceClock(10_000);
    assert.equal((await sqs.send(new ReceiveMessageCommand({ QueueUrl }))).Messages![0]!.Body, 'later');
  });
});

describe('deduplication over five minutes of the server clock', () => {
  test('a duplicate returns the original MessageId and stores no second copy', async () => {
    const QueueUrl = await fifoQueue();
    const first = await sqs.send(
      new SendMessageCommand({ QueueUrl, MessageBody: 'a', MessageGroupId: 'g', MessageDeduplicationId: 'd1' }),
    );
    await server.advanceClock(4 * 60_000);
    const dup = await sqs.send(
      new SendMessageCommand({ QueueUrl, MessageBody: 'b', MessageGroupId: 'g', MessageDeduplicationId: 'd1' }),
    );
    assert.equal(dup.MessageId, first.MessageId);
    assert.equal(dup.SequenceNumber, first.SequenceNumber);
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }),
    );
    assert.equal(Attributes!.ApproximateNumberOfMessages, '1');
    await server.advanceClock(60_001);
    const fresh = await sqs.send(
      new SendMessageCommand({ QueueUrl, MessageBody: 'c', MessageGroupId: 'g', MessageDeduplicationId: 'd1' }),
    );
    assert.notEqual(fresh.MessageId, first.MessageId);
  });

  test('content-based deduplication uses the body, and a deleted message still deduplicates', async () => {
    const QueueUrl = await fifoQueue({ ContentBasedDeduplication: 'true' });
    const first = await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'same', MessageGroupId: 'g' }));
    const r = await sqs.send(new ReceiveMessageCommand({ QueueUrl }));
    await sqs.send(new DeleteMessageCommand({ QueueUrl, ReceiptHandle: r.Messages![0]!.ReceiptHandle! }));
    const again = await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'same', MessageGroupId: 'other' }));
    assert.equal(again.MessageId, first.MessageId);
    assert.equal((await sqs.send(new ReceiveMessageCommand({ QueueUrl }))).Messages, undefined);
  });

  test('messageGroup scope deduplicates within a group only', async () => {
    const QueueUrl = await fifoQueue({ DeduplicationScope: 'messageGroup', FifoThroughputLimit: 'perMessageGroupId' });
    const a = await sqs.send(
      new SendMessageCommand({ QueueUrl, MessageBody: 'a', MessageGroupId: 'A', MessageDeduplicationId: 'same' }),
    );
    const b = await sqs.send(
      new SendMessageCommand({ QueueUrl, MessageBody: 'b', MessageGroupId: 'B', MessageDeduplicationId: 'same' }),
    );
    const a2 = await sqs.send(
      new SendMessageCommand({ QueueUrl, MessageBody: 'a2', MessageGroupId: 'A', MessageDeduplicationId: 'same' }),
    );
    assert.notEqual(a.MessageId, b.MessageId);
    assert.equal(a2.MessageId, a.MessageId);
  });

  test('a duplicate inside a batch is reported as a success with the original id', async () => {
    const QueueUrl = await fifoQueue();
    const r = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl,
        Entries: [
          { Id: 'a', MessageBody: 'x', MessageGroupId: 'g', MessageDeduplicationId: 'k' },
          { Id: 'b', MessageBody: 'y', MessageGroupId: 'g', MessageDeduplicationId: 'k' },
        ],
      }),
    );
    assert.equal(r.Successful!.length, 2);
    assert.equal(r.Successful![0]!.MessageId, r.Successful![1]!.MessageId);
  });
});

describe('receiving from FIFO queues', () => {
  test('groups are delivered in order and held while in flight; other groups flow', async () => {
    const QueueUrl = await fifoQueue({ ContentBasedDeduplication: 'true' });
    for (const [g, b] of [
      ['A', 'a1'],
      ['A', 'a2'],
      ['B', 'b1'],
      ['A', 'a3'],
    ]) {
      await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: b, MessageGroupId: g }));
    }
    const first = await sqs.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 2 }));
    assert.deepEqual(
      first.Messages!.map((m) => m.Body),
      ['a1', 'a2'],
    );
    const second = await sqs.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10 }));
    assert.deepEqual(
      second.Messages!.map((m) => m.Body),
      ['b1'],
      'A is held, B flows',
    );
    for (const m of first.Messages!)
      await sqs.send(new DeleteMessageCommand({ QueueUrl, ReceiptHandle: m.ReceiptHandle! }));
    const third = await sqs.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10 }));
    assert.deepEqual(
      third.Messages!.map((m) => m.Body),
      ['a3'],
    );
  });

  test('ReceiveRequestAttemptId replays the same messages and receipt handles', async () => {
    const QueueUrl = await fifoQueue({ ContentBasedDeduplication: 'true' });
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'm1', MessageGroupId: 'g' }));
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'm2', MessageGroupId: 'h' }));
    const req = { QueueUrl, MaxNumberOfMessages: 10, ReceiveRequestAttemptId: 'attempt-1', VisibilityTimeout: 30 };
    const a = await sqs.send(new ReceiveMessageCommand(req));
    const b = await sqs.send(new ReceiveMessageCommand(req));
    assert.equal(a.Messages!.length, 2);
    assert.deepEqual(
      b.Messages!.map((m) => m.ReceiptHandle),
      a.Messages!.map((m) => m.ReceiptHandle),
    );
    await server.advanceClock(31_000);
    const c = await sqs.send(new ReceiveMessageCommand(req));
    assert.notDeepEqual(
      c.Messages!.map((m) => m.ReceiptHandle),
      a.Messages!.map((m) => m.ReceiptHandle),
      'visibility expired',
    );
  });

  test('a receipt whose visibility window passed no longer deletes or changes visibility', async () => {
    const QueueUrl = await fifoQueue({ ContentBasedDeduplication: 'true' });
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'x', MessageGroupId: 'g' }));
    const r = await sqs.send(new ReceiveMessageCommand({ QueueUrl, VisibilityTimeout: 5 }));
    const ReceiptHandle = r.Messages![0]!.ReceiptHandle!;
    await server.advanceClock(5_000);
    await rejects(
      sqs.send(new DeleteMessageCommand({ QueueUrl, ReceiptHandle })),
      'InvalidParameterValue',
      `Value ${ReceiptHandle} for parameter ReceiptHandle is invalid. Reason: The receipt handle has expired.`,
    );
    await rejects(
      sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl, ReceiptHandle, VisibilityTimeout: 10 })),
      'InvalidParameterValue',
    );
    const again = await sqs.send(new ReceiveMessageCommand({ QueueUrl }));
    assert.equal(again.Messages![0]!.Body, 'x', 'the message was not deleted');
  });

  test('a poison message blocks its group until it is dead-lettered, then the group flows', async () => {
    const dlqUrl = await fifoQueue();
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ['QueueArn'] }),
    );
    const QueueUrl = await fifoQueue({
      ContentBasedDeduplication: 'true',
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: Attributes!.QueueArn, maxReceiveCount: 2 }),
    });
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'poison', MessageGroupId: 'g' }));
    const sent = await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'next', MessageGroupId: 'g' }));
    for (let i = 0; i < 2; i++) {
      const r = await sqs.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 1, VisibilityTimeout: 10 }));
      assert.equal(r.Messages![0]!.Body, 'poison', 'the group is blocked behind it');
      await server.advanceClock(10_000);
    }
    const r = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, MessageSystemAttributeNames: ['All'] }),
    );
    assert.deepEqual(
      r.Messages!.map((m) => m.Body),
      ['next'],
    );
    assert.equal(r.Messages![0]!.MessageId, sent.MessageId);
    const dead = await sqs.send(new ReceiveMessageCommand({ QueueUrl: dlqUrl, MessageSystemAttributeNames: ['All'] }));
    const moved = dead.Messages![0]!;
    assert.equal(moved.Body, 'poison');
    assert.equal(moved.Attributes!.MessageDeduplicationId, moved.MessageId, 'dedup id replaced by the message id');
    assert.equal(moved.Attributes!.MessageGroupId, 'g');
    assert.ok(
      Number(moved.Attributes!.SentTimestamp) >= Number(r.Messages![0]!.Attributes!.SentTimestamp),
      'enqueue time reset',
    );
  });
});

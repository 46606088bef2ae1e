import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { ApiError, CLIENT_LACKS_OPERATION, type Driver } from './drivers.js';

/**
 * The behaviour every client must see, whatever its protocol. Each driver test file runs
 * all of these against its own server. Expected errors are real SQS's (scratch/sqs-errors.md).
 */
export interface Scenario {
  name: string;
  run(api: Driver): Promise<void>;
}

const md5 = (s: string) => createHash('md5').update(s, 'utf8').digest('hex');

export async function expectError(
  _api: Driver,
  call: Promise<unknown>,
  expected: { code: string; message: string; status?: number },
): Promise<void> {
  const err = await call.then(
    () => assert.fail(`expected ${expected.code}`),
    (e: unknown) => e,
  );
  assert.ok(err instanceof ApiError, String(err));
  assert.equal(err.code, expected.code);
  assert.equal(err.message, expected.message);
  if (expected.status !== undefined && err.status !== undefined) assert.equal(err.status, expected.status);
}

/** Calls `op`; false when the client itself has no such operation. */
async function clientKnows(api: Driver, op: string, input: Record<string, unknown>): Promise<boolean> {
  try {
    await api.call(op, input);
    return true;
  } catch (e) {
    if (e instanceof ApiError && e.code === CLIENT_LACKS_OPERATION) return false;
    throw e;
  }
}

const nonExistent = (api: Driver) => ({
  code: 'AWS.SimpleQueueService.NonExistentQueue',
  status: 400,
  message:
    api.protocol === 'query'
      ? 'The specified queue does not exist for this wsdl version.'
      : 'The specified queue does not exist.',
});

const ATTRIBUTES = {
  text: { DataType: 'String', StringValue: 'héllo & <world>' },
  count: { DataType: 'Number', StringValue: '42' },
  raw: { DataType: 'Binary', BinaryValue: Buffer.from([0, 1, 2, 253, 254, 255]).toString('base64') },
};

export const scenarios: Scenario[] = [
  {
    name: 'queue lifecycle: create, list, url, attributes, tags, delete',
    async run(api) {
      const { QueueUrl } = await api.call('CreateQueue', {
        QueueName: 'lifecycle',
        Attributes: { VisibilityTimeout: '45', DelaySeconds: '1' },
        tags: { team: 'core' },
      });
      assert.match(QueueUrl, /\/000000000000\/lifecycle$/);
      // Same attributes again: idempotent.
      assert.equal(
        (await api.call('CreateQueue', { QueueName: 'lifecycle', Attributes: { VisibilityTimeout: '45' } })).QueueUrl,
        QueueUrl,
      );
      assert.deepEqual((await api.call('ListQueues', { QueueNamePrefix: 'life' })).QueueUrls, [QueueUrl]);
      assert.equal((await api.call('ListQueues', { QueueNamePrefix: 'nomatch' })).QueueUrls, undefined);
      assert.equal((await api.call('GetQueueUrl', { QueueName: 'lifecycle' })).QueueUrl, QueueUrl);

      const all = (await api.call('GetQueueAttributes', { QueueUrl, AttributeNames: ['All'] })).Attributes;
      assert.equal(all.VisibilityTimeout, '45');
      assert.equal(all.DelaySeconds, '1');
      assert.equal(all.QueueArn, 'arn:aws:sqs:us-east-1:000000000000:lifecycle');
      assert.equal(all.ApproximateNumberOfMessages, '0');
      await api.call('SetQueueAttributes', {
        QueueUrl,
        Attributes: { DelaySeconds: '0', MessageRetentionPeriod: '600' },
      });
      const some = (
        await api.call('GetQueueAttributes', { QueueUrl, AttributeNames: ['DelaySeconds', 'MessageRetentionPeriod'] })
      ).Attributes;
      assert.deepEqual(some, { DelaySeconds: '0', MessageRetentionPeriod: '600' });

      assert.deepEqual((await api.call('ListQueueTags', { QueueUrl })).Tags, { team: 'core' });
      await api.call('TagQueue', { QueueUrl, Tags: { env: 'test', empty: '' } });
      await api.call('UntagQueue', { QueueUrl, TagKeys: ['team', 'absent'] });
      assert.deepEqual((await api.call('ListQueueTags', { QueueUrl })).Tags, { env: 'test', empty: '' });
      await api.call('UntagQueue', { QueueUrl, TagKeys: ['env', 'empty'] });
      assert.equal((await api.call('ListQueueTags', { QueueUrl })).Tags, undefined);

      await api.call('DeleteQueue', { QueueUrl });
      await expectError(api, api.call('GetQueueUrl', { QueueName: 'lifecycle' }), nonExistent(api));
      await expectError(api, api.call('GetQueueAttributes', { QueueUrl, AttributeNames: ['All'] }), nonExistent(api));
    },
  },
  {
    name: 'messages: send with String/Number/Binary attributes, batch, receive, visibility, delete, purge',
    async run(api) {
      const { QueueUrl } = await api.call('CreateQueue', { QueueName: 'messages' });
      const body = 'line one\r\nline two: ünïcødé 🚀 & <xml/>';
      // The clients check MD5OfMessageBody and MD5OfMessageAttributes themselves.
      const sent = await api.call('SendMessage', { QueueUrl, MessageBody: body, MessageAttributes: ATTRIBUTES });
      assert.equal(sent.MD5OfMessageBody, md5(body));
      assert.match(sent.MD5OfMessageAttributes, /^[0-9a-f]{32}$/);
      const batch = await api.call('SendMessageBatch', {
        QueueUrl,
        Entries: [
          { Id: 'a', MessageBody: 'first', MessageAttributes: { n: { DataType: 'Number.float', StringValue: '1.5' } } },
          { Id: 'b', MessageBody: 'second', DelaySeconds: 0 },
          { Id: 'c', MessageBody: 'third' },
        ],
      });
      assert.deepEqual(batch.Successful.map((s: { Id: string }) => s.Id).sort(), ['a', 'b', 'c']);
      assert.equal(batch.Failed, undefined);
      assert.equal(batch.Successful.find((s: { Id: string }) => s.Id === 'b').MD5OfMessageBody, md5('second'));

      const received: Record<string, any>[] = [];
      for (let i = 0; i < 10 && received.length < 4; i++) {
        const r = await api.call('ReceiveMessage', {
          QueueUrl,
          MaxNumberOfMessages: 10,
          AttributeNames: ['All'],
          MessageAttributeNames: ['All'],
          VisibilityTimeout: 60,
        });
        received.push(...(r.Messages ?? []));
      }
      assert.equal(received.length, 4);
      const withAttrs = received.find((m) => m.Body === body)!;
      assert.deepEqual(withAttrs.MessageAttributes, ATTRIBUTES);
      assert.equal(withAttrs.MD5OfMessageAttributes, sent.MD5OfMessageAttributes);
      assert.equal(withAttrs.Attributes.ApproximateReceiveCount, '1');
      assert.equal(withAttrs.Attributes.SenderId, '000000000000');
      assert.match(withAttrs.Attributes.SentTimestamp, /^\d{13}$/);
      assert.deepEqual(received.find((m) => m.Body === 'first')!.MessageAttributes, {
        n: { DataType: 'Number.float', StringValue: '1.5' },
      });

      const counts = async () => {
        const a = (
          await api.call('GetQueueAttributes', {
            QueueUrl,
            AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
          })
        ).Attributes;
        return [Number(a.ApproximateNumberOfMessages), Number(a.ApproximateNumberOfMessagesNotVisible)];
      };
      assert.deepEqual(await counts(), [0, 4]);
      const [m1, m2, m3, m4] = received as [
        Record<string, any>,
        Record<string, any>,
        Record<string, any>,
        Record<string, any>,
      ];
      await api.call('ChangeMessageVisibility', { QueueUrl, ReceiptHandle: m1.ReceiptHandle, VisibilityTimeout: 0 });
      await api.call('DeleteMessage', { QueueUrl, ReceiptHandle: m2.ReceiptHandle });
      const cv = await api.call('ChangeMessageVisibilityBatch', {
        QueueUrl,
        Entries: [{ Id: 'x', ReceiptHandle: m3.ReceiptHandle, VisibilityTimeout: 0 }],
      });
      assert.deepEqual(cv.Successful, [{ Id: 'x' }]);
      const del = await api.call('DeleteMessageBatch', {
        QueueUrl,
        Entries: [{ Id: 'y', ReceiptHandle: m4.ReceiptHandle }],
      });
      assert.deepEqual(del.Successful, [{ Id: 'y' }]);
      assert.deepEqual(await counts(), [2, 0]);

      const again = await api.call('ReceiveMessage', {
        QueueUrl,
        MaxNumberOfMessages: 10,
        AttributeNames: ['ApproximateReceiveCount'],
      });
      assert.ok(again.Messages.length >= 1);
      assert.equal(again.Messages[0].Attributes.ApproximateReceiveCount, '2');
      await api.call('PurgeQueue', { QueueUrl });
      assert.deepEqual(await counts(), [0, 0]);
      await expectError(api, api.call('PurgeQueue', { QueueUrl }), {
        code: 'AWS.SimpleQueueService.PurgeQueueInProgress',
        status: 403,
        message: 'Only one PurgeQueue operation on messages is allowed every 60 seconds.',
      });
      assert.equal((await api.call('ReceiveMessage', { QueueUrl })).Messages, undefined);
    },
  },
  {
    name: 'FIFO: group and deduplication ids round-trip',
    async run(api) {
      const { QueueUrl } = await api.call('CreateQueue', {
        QueueName: 'orders.fifo',
        Attributes: { FifoQueue: 'true', ContentBasedDeduplication: 'true' },
      });
      const sent = await api.call('SendMessage', { QueueUrl, MessageBody: 'o1', MessageGroupId: 'g1' });
      assert.match(sent.SequenceNumber, /^\d+$/);
      const r = await api.call('ReceiveMessage', { QueueUrl, AttributeNames: ['All'] });
      assert.equal(r.Messages[0].Attributes.MessageGroupId, 'g1');
      assert.equal(r.Messages[0].Attributes.SequenceNumber, sent.SequenceNumber);
      await expectError(api, api.call('SendMessage', { QueueUrl, MessageBody: 'o2', MessageDeduplicationId: 'd' }), {
        code: 'MissingParameter',
        status: 400,
        message: 'The request must contain the parameter MessageGroupId.',
      });
    },
  },
  {
    name: 'dead-letter queues: sources, dead-lettering, and a move task back where the client has move tasks',
    async run(api) {
      const dlq = (await api.call('CreateQueue', { QueueName: 'dead' })).QueueUrl;
      const dlqArn = (await api.call('GetQueueAttributes', { QueueUrl: dlq, AttributeNames: ['QueueArn'] })).Attributes
        .QueueArn;
      const { QueueUrl } = await api.call('CreateQueue', {
        QueueName: 'source',
        Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 1 }) },
      });
      assert.deepEqual((await api.call('ListDeadLetterSourceQueues', { QueueUrl: dlq })).queueUrls, [QueueUrl]);
      await api.call('SendMessage', { QueueUrl, MessageBody: 'poison' });
      // The receive after the one that reached maxReceiveCount moves the message.
      assert.equal((await api.call('ReceiveMessage', { QueueUrl, VisibilityTimeout: 0 })).Messages.length, 1);
      assert.equal((await api.call('ReceiveMessage', { QueueUrl, VisibilityTimeout: 0 })).Messages, undefined);
      const dead = (
        await api.call('GetQueueAttributes', { QueueUrl: dlq, AttributeNames: ['ApproximateNumberOfMessages'] })
      ).Attributes;
      assert.equal(dead.ApproximateNumberOfMessages, '1');

      if (!(await clientKnows(api, 'ListMessageMoveTasks', { SourceArn: dlqArn }))) return;
      const sourceArn = dlqArn.replace(/dead$/, 'source');
      await expectError(api, api.call('StartMessageMoveTask', { SourceArn: sourceArn }), {
        code: 'InvalidParameterValue',
        status: 400,
        message: 'Source queue must be configured as a Dead Letter Queue.',
      });
      await expectError(api, api.call('CancelMessageMoveTask', { TaskHandle: 'foobared' }), {
        code: 'InvalidParameterValue',
        status: 400,
        message: 'Value for parameter TaskHandle is invalid.',
      });
      const { TaskHandle } = await api.call('StartMessageMoveTask', { SourceArn: dlqArn });
      assert.ok(TaskHandle);
      let task: Record<string, any> = {};
      for (let i = 0; i < 50 && task.Status !== 'COMPLETED'; i++) {
        task = (await api.call('ListMessageMoveTasks', { SourceArn: dlqArn })).Results[0];
        if (task.Status !== 'COMPLETED') await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(task.Status, 'COMPLETED');
      assert.equal(task.ApproximateNumberOfMessagesMoved, 1);
      assert.equal((await api.call('ReceiveMessage', { QueueUrl })).Messages[0].Body, 'poison');
    },
  },
  {
    name: 'errors: codes and messages as real SQS sends them',
    async run(api) {
      const { QueueUrl } = await api.call('CreateQueue', { QueueName: 'errors' });
      await expectError(api, api.call('DeleteMessage', { QueueUrl, ReceiptHandle: 'garbage' }), {
        code: 'ReceiptHandleIsInvalid',
        message: 'The input receipt handle "garbage" is not a valid receipt handle.',
      });
      const entries = Array.from({ length: 11 }, (_, i) => ({ Id: `m${i}`, MessageBody: 'x' }));
      await expectError(api, api.call('SendMessageBatch', { QueueUrl, Entries: entries }), {
        code: 'AWS.SimpleQueueService.TooManyEntriesInBatchRequest',
        status: 400,
        message: 'Maximum number of entries per request are 10. You have sent 11.',
      });
      await expectError(
        api,
        api.call('SendMessageBatch', { QueueUrl, Entries: [{ Id: 'message:1', MessageBody: 'x' }] }),
        {
          code: 'AWS.SimpleQueueService.InvalidBatchEntryId',
          status: 400,
          message:
            'A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.',
        },
      );
      await expectError(api, api.call('GetQueueAttributes', { QueueUrl, AttributeNames: ['Foobar'] }), {
        code: 'InvalidAttributeName',
        status: 400,
        message: 'Unknown Attribute Foobar.',
      });
      await expectError(api, api.call('SetQueueAttributes', { QueueUrl, Attributes: { FifoQueue: 'true' } }), {
        code: 'InvalidAttributeName',
        status: 400,
        message: 'Unknown Attribute FifoQueue.',
      });
      await expectError(api, api.call('ReceiveMessage', { QueueUrl, MaxNumberOfMessages: 11 }), {
        code: 'InvalidParameterValue',
        status: 400,
        message:
          'Value 11 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided.',
      });
      await expectError(
        api,
        api.call('SendMessage', {
          QueueUrl,
          MessageBody: 'x',
          MessageAttributes: { ErrorDetails: { DataType: 'String', StringValue: '' } },
        }),
        {
          code: 'InvalidParameterValue',
          status: 400,
          message: "Message (user) attribute 'ErrorDetails' must contain a non-empty value of type 'String'.",
        },
      );
      await expectError(
        api,
        api.call('SendMessage', { QueueUrl: `${QueueUrl}-gone`, MessageBody: 'x' }),
        nonExistent(api),
      );
    },
  },
];

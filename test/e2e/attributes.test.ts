/** GetQueueAttributes and SetQueueAttributes over the JSON protocol. */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import {
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  SendMessageCommand,
  SetQueueAttributesCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { useServerProcess, type ServerProcess } from '../support/server-process.js';
import { assertSqsError, attributes, counts, createQueue, queueDoesNotExist, receive } from './helpers.js';

let server: ServerProcess;
let sqs: SQSClient;

useServerProcess({ storage: 'memory', manualClock: true }, (s) => {
  server = s;
  sqs = s.client();
});

const set = (QueueUrl: string, Attributes: Record<string, string>) =>
  sqs.send(new SetQueueAttributesCommand({ QueueUrl, Attributes }));

describe('GetQueueAttributes', () => {
  test('All on a new standard queue: exactly the 12 SQS keys with their defaults', async () => {
    const now = await server.advanceClock(0);
    const url = await createQueue(sqs, 'defaults');
    const a = await attributes(sqs, url);
    assert.deepEqual(Object.keys(a).sort(), [
      'ApproximateNumberOfMessages',
      'ApproximateNumberOfMessagesDelayed',
      'ApproximateNumberOfMessagesNotVisible',
      'CreatedTimestamp',
      'DelaySeconds',
      'LastModifiedTimestamp',
      'MaximumMessageSize',
      'MessageRetentionPeriod',
      'QueueArn',
      'ReceiveMessageWaitTimeSeconds',
      'SqsManagedSseEnabled',
      'VisibilityTimeout',
    ]);
    assert.equal(a.ApproximateNumberOfMessages, '0');
    assert.equal(a.ApproximateNumberOfMessagesDelayed, '0');
    assert.equal(a.ApproximateNumberOfMessagesNotVisible, '0');
    assert.equal(a.DelaySeconds, '0');
    assert.equal(a.MaximumMessageSize, '1048576');
    assert.equal(a.MessageRetentionPeriod, '345600');
    assert.equal(a.ReceiveMessageWaitTimeSeconds, '0');
    assert.equal(a.VisibilityTimeout, '30');
    assert.equal(a.SqsManagedSseEnabled, 'true');
    assert.equal(a.QueueArn, 'arn:aws:sqs:us-east-1:000000000000:defaults');
    // Timestamps are integer epoch seconds of the server's clock.
    assert.match(a.CreatedTimestamp!, /^\d+$/);
    assert.equal(a.CreatedTimestamp, String(Math.floor(now / 1000)));
    assert.equal(a.LastModifiedTimestamp, a.CreatedTimestamp);
  });

  test('individual names return exactly those names', async () => {
    const url = await createQueue(sqs, 'some-names', { VisibilityTimeout: '20' });
    const a = await attributes(sqs, url, ['QueueArn', 'CreatedTimestamp', 'VisibilityTimeout']);
    assert.deepEqual(Object.keys(a).sort(), ['CreatedTimestamp', 'QueueArn', 'VisibilityTimeout']);
    assert.equal(a.VisibilityTimeout, '20');
    assert.deepEqual(await attributes(sqs, url, ['ApproximateNumberOfMessagesDelayed']), {
      ApproximateNumberOfMessagesDelayed: '0',
    });
    // An unset optional attribute is simply absent.
    assert.deepEqual(await attributes(sqs, url, ['Policy']), {});
  });

  test('an unknown name is InvalidAttributeName', async () => {
    const url = await createQueue(sqs, 'bad-name');
    await assertSqsError(attributes(sqs, url, ['VisibilityTimeout', 'Foobar']), {
      name: 'InvalidAttributeName',
      status: 400,
      message: 'Unknown Attribute Foobar.',
    });
  });

  test('approximate counts: visible, not visible, delayed', async () => {
    const QueueUrl = await createQueue(sqs, 'counts');
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'one' }));
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'two' }));
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'later', DelaySeconds: 60 }));
    assert.deepEqual(await counts(sqs, QueueUrl), { visible: 2, inflight: 0, delayed: 1 });
    assert.equal((await receive(sqs, QueueUrl)).length, 1);
    assert.deepEqual(await counts(sqs, QueueUrl), { visible: 1, inflight: 1, delayed: 1 });
    // After 60 s the delayed message and the received one (30 s timeout) are both visible.
    await server.advanceClock(60_000);
    assert.deepEqual(await counts(sqs, QueueUrl), { visible: 3, inflight: 0, delayed: 0 });
  });

  test('QueueDoesNotExist for a deleted queue', async () => {
    const QueueUrl = await createQueue(sqs, 'gone');
    await sqs.send(new DeleteQueueCommand({ QueueUrl }));
    await assertSqsError(
      sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['All'] })),
      queueDoesNotExist,
    );
  });
});

describe('SetQueueAttributes', () => {
  test('changes values and LastModifiedTimestamp, not CreatedTimestamp', async () => {
    const url = await createQueue(sqs, 'settable', {
      MessageRetentionPeriod: '604800',
      ReceiveMessageWaitTimeSeconds: '10',
      VisibilityTimeout: '20',
    });
    const before = await attributes(sqs, url);
    await server.advanceClock(10_000);
    await set(url, { MaximumMessageSize: '2048', VisibilityTimeout: '69', DelaySeconds: '420' });
    const after = await attributes(sqs, url);
    assert.equal(after.CreatedTimestamp, before.CreatedTimestamp);
    assert.deepEqual(after, {
      ...before,
      MaximumMessageSize: '2048',
      VisibilityTimeout: '69',
      DelaySeconds: '420',
      LastModifiedTimestamp: String(Number(before.LastModifiedTimestamp) + 10),
    });
  });

  test('a rejected change applies nothing, not even its valid attributes', async () => {
    const url = await createQueue(sqs, 'atomic-set');
    const before = await attributes(sqs, url);
    await server.advanceClock(5_000);
    await assertSqsError(set(url, { VisibilityTimeout: '60', DelaySeconds: '901' }), {
      name: 'InvalidAttributeValue',
      status: 400,
      message: 'Invalid value for the parameter DelaySeconds.',
    });
    await assertSqsError(set(url, { VisibilityTimeout: '60', Bogus: '1' }), {
      name: 'InvalidAttributeName',
      status: 400,
      message: 'Unknown Attribute Bogus.',
    });
    await assertSqsError(set(url, { VisibilityTimeout: '60', QueueArn: 'arn:aws:sqs:us-east-1:000000000000:x' }), {
      name: 'InvalidAttributeName',
      status: 400,
      message: 'Unknown Attribute QueueArn.',
    });
    assert.deepEqual(await attributes(sqs, url), before);
  });

  test('FifoQueue on a standard queue is an unknown attribute', async () => {
    const url = await createQueue(sqs, 'std-set-fifo');
    await assertSqsError(set(url, { FifoQueue: 'true' }), {
      name: 'InvalidAttributeName',
      status: 400,
      message: 'Unknown Attribute FifoQueue.',
    });
    assert.equal((await attributes(sqs, url)).FifoQueue, undefined);
  });

  test('Policy is stored, returned (also under All), and removed by an empty value', async () => {
    const url = await createQueue(sqs, 'policy');
    const policy = JSON.stringify({
      Version: '2012-10-17',
      Statement: [
        {
          Sid: 's1',
          Effect: 'Allow',
          Principal: '*',
          Action: 'sqs:SendMessage',
          Resource: 'arn:aws:sqs:us-east-1:000000000000:policy',
        },
      ],
    });
    await set(url, { Policy: policy });
    assert.deepEqual(await attributes(sqs, url, ['Policy']), { Policy: policy });
    assert.equal((await attributes(sqs, url)).Policy, policy);
    await assertSqsError(set(url, { Policy: '{not json' }), {
      name: 'InvalidAttributeValue',
      status: 400,
      message: /Policy/,
    });
    assert.equal((await attributes(sqs, url)).Policy, policy);
    await set(url, { Policy: '' });
    assert.equal((await attributes(sqs, url)).Policy, undefined);
  });

  test('SSE: KMS attributes are stored and returned; SQS-managed SSE turns them off', async () => {
    const url = await createQueue(sqs, 'sse');
    const names = ['KmsMasterKeyId', 'KmsDataKeyReusePeriodSeconds', 'SqsManagedSseEnabled'];
    await set(url, {
      KmsMasterKeyId: 'testKeyId',
      KmsDataKeyReusePeriodSeconds: '6000',
      SqsManagedSseEnabled: 'false',
    });
    assert.deepEqual(await attributes(sqs, url, names), {
      KmsMasterKeyId: 'testKeyId',
      KmsDataKeyReusePeriodSeconds: '6000',
      SqsManagedSseEnabled: 'false',
    });
    assert.equal((await attributes(sqs, url)).KmsMasterKeyId, 'testKeyId');
    await set(url, { SqsManagedSseEnabled: 'true' });
    assert.deepEqual(await attributes(sqs, url, names), { SqsManagedSseEnabled: 'true' });
  });

  test('SSE: a KMS key turns SQS-managed SSE off', async () => {
    const url = await createQueue(sqs, 'sse-kms-only', { KmsMasterKeyId: 'alias/aws/sqs' });
    const a = await attributes(sqs, url);
    assert.equal(a.KmsMasterKeyId, 'alias/aws/sqs');
    assert.equal(a.SqsManagedSseEnabled, 'false');
    assert.equal(a.KmsDataKeyReusePeriodSeconds, '300');
  });

  test('SSE: KMS and SQS-managed SSE together are rejected, and nothing changes', async () => {
    const url = await createQueue(sqs, 'sse-both');
    const before = await attributes(sqs, url);
    const both = {
      name: 'InvalidAttributeName',
      status: 400,
      message:
        'You can use one type of server-side encryption (SSE) at one time. You can either enable KMS SSE or SQS SSE.',
    };
    await assertSqsError(set(url, { KmsMasterKeyId: 'testKeyId', SqsManagedSseEnabled: 'true' }), both);
    assert.deepEqual(await attributes(sqs, url), before);
    await assertSqsError(
      createQueue(sqs, 'sse-both-create', { KmsMasterKeyId: 'k', SqsManagedSseEnabled: 'true' }),
      both,
    );
  });

  test('KmsDataKeyReusePeriodSeconds must be within 60..86400', async () => {
    const url = await createQueue(sqs, 'kms-reuse');
    for (const bad of ['59', '86401']) {
      await assertSqsError(set(url, { KmsDataKeyReusePeriodSeconds: bad }), {
        name: 'InvalidAttributeValue',
        status: 400,
        message: 'Invalid value for the parameter KmsDataKeyReusePeriodSeconds.',
      });
    }
    await set(url, { KmsDataKeyReusePeriodSeconds: '86400' });
    assert.equal((await attributes(sqs, url, ['KmsDataKeyReusePeriodSeconds'])).KmsDataKeyReusePeriodSeconds, '86400');
  });

  test('QueueDoesNotExist for a missing queue', async () => {
    await assertSqsError(set(`${server.url}/000000000000/nope`, { DelaySeconds: '1' }), queueDoesNotExist);
  });
});

/**
 * Behaviours of real SQS that are easy to get wrong (FIFO order and deduplication,
 * receipts, self-redrive, KMS attributes, error texts, the trace header, JSON answers to
 * Query), end to end over both protocols: the AWS SDK v3 (JSON) and Debian's boto3
 * (Query), against one server on a manual clock, so the visibility examples take no real
 * time. What no client can send (a trace header, an Accept header) goes as a raw request
 * in each protocol.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { XMLParser } from 'fast-xml-parser';
import type { Driver } from '../query/drivers.js';
import { needs } from '../support/requirements.js';
import { useBothProtocols, create, expectError, receive } from './both-protocols.js';
import { rawJson, SDK_HEADER } from './helpers.js';

const { server, drivers, bothProtocols } = useBothProtocols();

const arn = (name: string) => `arn:aws:sqs:us-east-1:000000000000:${name}`;
const fifo = { FifoQueue: 'true', ContentBasedDeduplication: 'true' };

const bodies = (ms: { Body: string }[]) => ms.map((m) => m.Body);

bothProtocols('a FIFO group is returned in order up to its first invisible message', async (api, q) => {
  const url = await create(api, q('groups.fifo'), fifo);
  for (const [g, b] of [
    ['g1', 'g1-m1'],
    ['g1', 'g1-m2'],
    ['g2', 'g2-m1'],
  ])
    await api.call('SendMessage', { QueueUrl: url, MessageBody: b, MessageGroupId: g });
  const first = await receive(api, url, { MaxNumberOfMessages: 2 });
  assert.deepEqual(bodies(first), ['g1-m1', 'g1-m2']);
  await api.call('ChangeMessageVisibility', {
    QueueUrl: url,
    ReceiptHandle: first[0]!.ReceiptHandle,
    VisibilityTimeout: 1,
  });
  await server().advanceClock(2000);
  assert.deepEqual(bodies(await receive(api, url, { MaxNumberOfMessages: 3 })), ['g2-m1', 'g1-m1']);

  for (const [extended, back] of [
    [0, []],
    [1, ['foo']],
    [2, ['foo', 'bar']],
  ] as const) {
    const u = await create(api, q(`fbb${extended}.fifo`), { ...fifo, VisibilityTimeout: '1' });
    for (const b of ['foo', 'bar', 'baz'])
      await api.call('SendMessage', { QueueUrl: u, MessageBody: b, MessageGroupId: 'one' });
    const got = await receive(api, u, { MaxNumberOfMessages: 10 });
    assert.deepEqual(bodies(got), ['foo', 'bar', 'baz']);
    await api.call('ChangeMessageVisibility', {
      QueueUrl: u,
      ReceiptHandle: got[extended]!.ReceiptHandle,
      VisibilityTimeout: 4,
    });
    await server().advanceClock(2500);
    assert.deepEqual(
      bodies(await receive(api, u, { MaxNumberOfMessages: 10 })),
      back,
      `extending message ${extended + 1}`,
    );
  }
});

bothProtocols('ChangeMessageVisibility accepts an older receipt handle', async (api, q) => {
  const url = await create(api, q('older-receipt'));
  await api.call('SendMessage', { QueueUrl: url, MessageBody: 'm' });
  const [first] = await receive(api, url, { VisibilityTimeout: 0 });
  const [second] = await receive(api, url, { VisibilityTimeout: 3 });
  assert.notEqual(first!.ReceiptHandle, second!.ReceiptHandle);
  assert.deepEqual(await receive(api, url), []);
  await api.call('ChangeMessageVisibility', {
    QueueUrl: url,
    ReceiptHandle: first!.ReceiptHandle,
    VisibilityTimeout: 0,
  });
  assert.deepEqual(bodies(await receive(api, url)), ['m']);
});

bothProtocols('PurgeQueue clears the deduplication ids of a FIFO queue', async (api, q) => {
  const url = await create(api, q('purge.fifo'), fifo);
  const send = () =>
    api.call('SendMessage', { QueueUrl: url, MessageBody: 'same', MessageGroupId: 'g', MessageDeduplicationId: 'D' });
  const a = await send();
  await api.call('PurgeQueue', { QueueUrl: url });
  const b = await send();
  assert.notEqual(b.MessageId, a.MessageId, 'a new message, not the purged one');
  const got = await receive(api, url);
  assert.deepEqual(
    got.map((m) => [m.Body, (m as { MessageId?: string }).MessageId]),
    [['same', b.MessageId]],
  );
});

bothProtocols('a change of DeduplicationScope keeps what was deduplicated', async (api, q) => {
  const url = await create(api, q('scope.fifo'), { FifoQueue: 'true' });
  const a = await api.call('SendMessage', {
    QueueUrl: url,
    MessageBody: 'Test1',
    MessageGroupId: 'A',
    MessageDeduplicationId: 'D',
  });
  await api.call('SetQueueAttributes', {
    QueueUrl: url,
    Attributes: { DeduplicationScope: 'messageGroup', FifoThroughputLimit: 'perMessageGroupId' },
  });
  const c = await api.call('SendMessage', {
    QueueUrl: url,
    MessageBody: 'Test3',
    MessageGroupId: 'B',
    MessageDeduplicationId: 'D',
  });
  assert.equal(c.MessageId, a.MessageId, 'a duplicate of the queue-scoped id');
  assert.deepEqual(bodies(await receive(api, url, { MaxNumberOfMessages: 10 })), ['Test1']);
});

bothProtocols('a RedrivePolicy may name the queue itself, and a move into it happens once', async (api, q) => {
  const name = q('self');
  const url = await create(api, name);
  await api.call('SetQueueAttributes', {
    QueueUrl: url,
    Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arn(name), maxReceiveCount: 1 }) },
  });
  const attrs = (await api.call('GetQueueAttributes', { QueueUrl: url, AttributeNames: ['RedrivePolicy'] })).Attributes;
  assert.equal(JSON.parse(attrs.RedrivePolicy).deadLetterTargetArn, arn(name));
  await api.call('SendMessage', { QueueUrl: url, MessageBody: 'poison' });
  const wanted = { VisibilityTimeout: 0, AttributeNames: ['ApproximateReceiveCount'] };
  assert.equal((await receive(api, url, wanted))[0]!.Attributes!.ApproximateReceiveCount, '1');
  // The next receive dead-letters it into its own queue, which starts its count again.
  let got = await receive(api, url, wanted);
  if (got.length === 0) got = await receive(api, url, wanted);
  assert.deepEqual(
    got.map((m) => [m.Body, m.Attributes!.ApproximateReceiveCount]),
    [['poison', '1']],
  );
  const counts = (
    await api.call('GetQueueAttributes', { QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessages'] })
  ).Attributes;
  assert.equal(counts.ApproximateNumberOfMessages, '1', 'one copy, in its own queue');
});

bothProtocols('an empty KmsMasterKeyId removes KmsDataKeyReusePeriodSeconds', async (api, q) => {
  const url = await create(api, q('kms'), { KmsMasterKeyId: 'alias/aws/sqs', KmsDataKeyReusePeriodSeconds: '600' });
  const get = async () =>
    (await api.call('GetQueueAttributes', { QueueUrl: url, AttributeNames: ['All'] })).Attributes as Record<
      string,
      string
    >;
  assert.equal((await get()).KmsDataKeyReusePeriodSeconds, '600');
  await api.call('SetQueueAttributes', { QueueUrl: url, Attributes: { KmsMasterKeyId: '' } });
  const after = await get();
  assert.equal(after.KmsDataKeyReusePeriodSeconds, undefined);
  assert.equal(after.KmsMasterKeyId, undefined);
});

bothProtocols('error texts', async (api, q) => {
  const url = await create(api, q('errors'));
  await expectError(
    api.call('SendMessage', { QueueUrl: url, MessageBody: '' }),
    'MissingParameter',
    'The request must contain the parameter MessageBody.',
  );
  await expectError(
    api.call('ReceiveMessage', { QueueUrl: url, WaitTimeSeconds: 21 }),
    'InvalidParameterValue',
    'Value 21 for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and <= 20, if provided.',
  );
  for (const [attr, value] of [
    ['DeduplicationScope', 'queue'],
    ['FifoThroughputLimit', 'perQueue'],
  ]) {
    await expectError(
      api.call('CreateQueue', { QueueName: q('std-with-fifo-attr'), Attributes: { [attr!]: value } }),
      'InvalidAttributeName',
      `You can specify the ${attr} only when FifoQueue is set to true.`,
    );
  }
  await api.call('AddPermission', {
    QueueUrl: url,
    Label: 'l',
    AWSAccountIds: ['111111111111'],
    Actions: ['SendMessage'],
  });
  const policy = (await api.call('GetQueueAttributes', { QueueUrl: url, AttributeNames: ['Policy'] })).Attributes
    .Policy;
  assert.equal(JSON.parse(policy).Version, '2008-10-17');
});

bothProtocols('a standard queue hands out a message whose visibility ran out before newer ones', async (api, q) => {
  const url = await create(api, q('older-first'));
  await api.call('SendMessage', { QueueUrl: url, MessageBody: 'old' });
  assert.deepEqual(bodies(await receive(api, url, { VisibilityTimeout: 1 })), ['old']);
  await server().advanceClock(500);
  for (const b of ['new1', 'new2']) await api.call('SendMessage', { QueueUrl: url, MessageBody: b });
  await server().advanceClock(1000);
  assert.deepEqual(bodies(await receive(api, url)), ['old']);
});

// Over Query the whole form is posted raw: no client sets these headers (but the SDK's own, see SDK_HEADER).
const form = (params: Record<string, string>) => new URLSearchParams({ Version: '2012-11-05', ...params });
const postQuery = (params: Record<string, string>, headers: Record<string, string> = {}) =>
  fetch(`${server().url}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...SDK_HEADER, ...headers },
    body: form(params),
  });

describe('the X-Amzn-Trace-Id header becomes the AWSTraceHeader system attribute', () => {
  const trace = 'Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=1';
  const explicit = 'Root=1-00000000-000000000000000000000001;Sampled=0';
  const receiveTrace = async (api: Driver, url: string) =>
    (await receive(api, url, { MaxNumberOfMessages: 10, AttributeNames: ['AWSTraceHeader'] })).map((m) => [
      m.Body,
      m.Attributes?.AWSTraceHeader,
    ]);

  test('JSON: SendMessage and SendMessageBatch, with an explicit attribute winning', async () => {
    const api = drivers[0]!;
    const url = await create(api, 'json-trace');
    const h = { 'x-amzn-trace-id': trace };
    assert.equal(
      (await rawJson(server().url, 'AmazonSQS.SendMessage', JSON.stringify({ QueueUrl: url, MessageBody: 'one' }), h))
        .status,
      200,
    );
    const batch = {
      QueueUrl: url,
      Entries: [
        { Id: 'a', MessageBody: 'two' },
        {
          Id: 'b',
          MessageBody: 'three',
          MessageSystemAttributes: { AWSTraceHeader: { DataType: 'String', StringValue: explicit } },
        },
      ],
    };
    assert.equal((await rawJson(server().url, 'AmazonSQS.SendMessageBatch', JSON.stringify(batch), h)).status, 200);
    assert.deepEqual(await receiveTrace(api, url), [
      ['one', trace],
      ['two', trace],
      ['three', explicit],
    ]);
  });

  test('Query: SendMessage and SendMessageBatch, with an explicit attribute winning', needs('boto3'), async () => {
    const api = drivers[1]!;
    const url = await create(api, 'query-trace');
    const h = { 'x-amzn-trace-id': trace };
    assert.equal((await postQuery({ Action: 'SendMessage', QueueUrl: url, MessageBody: 'one' }, h)).status, 200);
    const batch = await postQuery(
      {
        Action: 'SendMessageBatch',
        QueueUrl: url,
        'SendMessageBatchRequestEntry.1.Id': 'a',
        'SendMessageBatchRequestEntry.1.MessageBody': 'two',
        'SendMessageBatchRequestEntry.2.Id': 'b',
        'SendMessageBatchRequestEntry.2.MessageBody': 'three',
        'SendMessageBatchRequestEntry.2.MessageSystemAttribute.1.Name': 'AWSTraceHeader',
        'SendMessageBatchRequestEntry.2.MessageSystemAttribute.1.Value.DataType': 'String',
        'SendMessageBatchRequestEntry.2.MessageSystemAttribute.1.Value.StringValue': explicit,
      },
      h,
    );
    assert.equal(batch.status, 200, await batch.text());
    assert.deepEqual(await receiveTrace(api, url), [
      ['one', trace],
      ['two', trace],
      ['three', explicit],
    ]);
  });
});

describe('the Query protocol answers JSON to Accept: application/json', () => {
  const json = { accept: 'application/json' };

  test('results: the XML document as JSON, with the request id', async () => {
    const created = await postQuery({ Action: 'CreateQueue', QueueName: 'accept-json' }, json);
    assert.equal(created.status, 200);
    assert.match(created.headers.get('content-type') ?? '', /^application\/json/);
    const requestId = created.headers.get('x-amzn-requestid');
    const body = (await created.json()) as {
      CreateQueueResponse: { CreateQueueResult: { QueueUrl: string }; ResponseMetadata: { RequestId: string } };
    };
    assert.match(body.CreateQueueResponse.CreateQueueResult.QueueUrl, /\/000000000000\/accept-json$/);
    assert.equal(body.CreateQueueResponse.ResponseMetadata.RequestId, requestId);
    const url = body.CreateQueueResponse.CreateQueueResult.QueueUrl;
    await postQuery({ Action: 'SendMessage', QueueUrl: url, MessageBody: 'hello' }, json);
    const got = (await (await postQuery({ Action: 'ReceiveMessage', QueueUrl: url }, json)).json()) as {
      ReceiveMessageResponse: { ReceiveMessageResult: { Messages: { Body: string; MD5OfBody: string }[] } };
    };
    assert.deepEqual(
      got.ReceiveMessageResponse.ReceiveMessageResult.Messages.map((m) => m.Body),
      ['hello'],
    );
    const deleted = (await (await postQuery({ Action: 'DeleteQueue', QueueUrl: url }, json)).json()) as Record<
      string,
      unknown
    >;
    assert.deepEqual(Object.keys(deleted), ['DeleteQueueResponse']);
    assert.deepEqual(Object.keys(deleted.DeleteQueueResponse as object), ['ResponseMetadata'], 'no result to give');
  });

  test('errors: Error with Code, Message and Type, and the request id', async () => {
    const res = await postQuery({ Action: 'GetQueueUrl', QueueName: 'no-such-queue' }, json);
    assert.equal(res.status, 400);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(res.headers.get('x-amzn-query-error'), 'AWS.SimpleQueueService.NonExistentQueue;Sender');
    assert.deepEqual(await res.json(), {
      Error: {
        Code: 'AWS.SimpleQueueService.NonExistentQueue',
        Message: 'The specified queue does not exist for this wsdl version.',
        Type: 'Sender',
      },
      RequestId: res.headers.get('x-amzn-requestid'),
    });
  });

  test('without that header the answer stays XML', async () => {
    const res = await postQuery({ Action: 'ListQueues', QueueNamePrefix: 'no-such-prefix' });
    assert.match(res.headers.get('content-type') ?? '', /^text\/xml/);
    assert.match(await res.text(), /<ListQueuesResult\/>/);
  });
});

describe('an empty ReceiveMessage result over Query is the empty element', () => {
  test('raw Query: <ReceiveMessageResult/>', async () => {
    const created = new XMLParser().parse(
      await (await postQuery({ Action: 'CreateQueue', QueueName: 'empty-receive' })).text(),
    );
    const url = created.CreateQueueResponse.CreateQueueResult.QueueUrl as string;
    const text = await (await postQuery({ Action: 'ReceiveMessage', QueueUrl: url })).text();
    assert.match(text, /<ReceiveMessageResponse[^>]*><ReceiveMessageResult\/><ResponseMetadata>/);
  });
});

// 11 (FIFO in-flight limit 120,000): test/engine/fifo-inflight.test.ts puts 20,001 FIFO messages in
// flight and receives one more; reaching that end to end would take thousands of requests.

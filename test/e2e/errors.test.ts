/**
 * Bad input on the wire, below the SDK: raw AWS JSON 1.0 requests. Every error is a JSON
 * body with `__type` and `message`, an `x-amzn-query-error` header and the right status.
 * Also: request size limits and queue URLs that follow the request's Host header.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { ListQueuesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { sqsClient, useServerProcess, type ServerProcess } from '../support/server-process.js';
import { createQueue, rawJson } from './helpers.js';

let server: ServerProcess;
let sqs: SQSClient;
let queueUrl: string;

// Its Host header tests address the server by names of their own (docs/security.md).
useServerProcess(
  { storage: 'memory', manualClock: true, args: ['--allowed-hosts', 'sqs.example.com,.test'] },
  async (s) => {
    server = s;
    sqs = s.client();
    queueUrl = await createQueue(sqs, 'wire');
  },
);

const md5 = (s: string) => createHash('md5').update(s).digest('hex');

interface WireError {
  status: number;
  /** `__type` without the namespace. */
  type: string;
  /** First half of x-amzn-query-error. */
  code: string;
  message?: string | RegExp;
}

async function assertWireError(target: string, body: string, expected: WireError): Promise<void> {
  const res = await rawJson(server.url, target, body);
  assert.equal(res.status, expected.status, res.text);
  assert.equal(res.headers.get('content-type'), 'application/x-amz-json-1.0');
  assert.equal(res.headers.get('x-amzn-query-error'), `${expected.code};Sender`);
  assert.equal(res.json.__type, `com.amazonaws.sqs#${expected.type}`);
  assert.equal(typeof res.json.message, 'string');
  if (expected.message instanceof RegExp) assert.match(res.json.message as string, expected.message);
  else if (expected.message !== undefined) assert.equal(res.json.message, expected.message);
}

const invalidValue = (message?: string | RegExp): WireError => ({
  status: 400,
  type: 'InvalidParameterValueException',
  code: 'InvalidParameterValue',
  message,
});
const missing = (name: string): WireError => ({
  status: 400,
  type: 'MissingRequiredParameterException',
  code: 'MissingParameter',
  message: `The request must contain the parameter ${name}.`,
});

describe('malformed requests', () => {
  test('malformed JSON', async () => {
    for (const body of ['{bad json', '{"QueueName": "x"', 'nul']) {
      await assertWireError('AmazonSQS.CreateQueue', body, {
        status: 400,
        type: 'SerializationException',
        code: 'SerializationException',
      });
    }
  });

  test('a body that is JSON but not an object', async () => {
    for (const body of ['[1, 2]', '"text"', '42', 'null']) {
      await assertWireError('AmazonSQS.ListQueues', body, {
        status: 400,
        type: 'SerializationException',
        code: 'SerializationException',
      });
    }
  });

  test('an unknown target', async () => {
    for (const target of ['AmazonSQS.FooBar', 'SomethingElse.CreateQueue', 'AmazonSQS.']) {
      await assertWireError(target, '{}', {
        status: 400,
        type: 'UnknownOperationException',
        code: 'UnknownOperationException',
      });
    }
  });

  test('missing required parameters', async () => {
    await assertWireError('AmazonSQS.CreateQueue', '{}', missing('QueueName'));
    await assertWireError('AmazonSQS.GetQueueUrl', '{}', missing('QueueName'));
    await assertWireError('AmazonSQS.SendMessage', '{}', missing('QueueUrl'));
    await assertWireError('AmazonSQS.SendMessage', JSON.stringify({ QueueUrl: queueUrl }), missing('MessageBody'));
    await assertWireError('AmazonSQS.DeleteMessage', JSON.stringify({ QueueUrl: queueUrl }), missing('ReceiptHandle'));
    await assertWireError('AmazonSQS.SendMessageBatch', JSON.stringify({ QueueUrl: queueUrl }), missing('Entries'));
    await assertWireError('AmazonSQS.TagQueue', JSON.stringify({ QueueUrl: queueUrl }), missing('Tags'));
    await assertWireError('AmazonSQS.UntagQueue', JSON.stringify({ QueueUrl: queueUrl }), missing('TagKeys'));
    await assertWireError(
      'AmazonSQS.SetQueueAttributes',
      JSON.stringify({ QueueUrl: queueUrl }),
      missing('Attributes'),
    );
    // An empty body is an empty input: the same error.
    await assertWireError('AmazonSQS.GetQueueAttributes', '', missing('QueueUrl'));
  });

  test('parameters of the wrong type', async () => {
    const q = (extra: object) => JSON.stringify({ QueueUrl: queueUrl, ...extra });
    await assertWireError('AmazonSQS.CreateQueue', '{"QueueName": 5}', invalidValue(/QueueName/));
    await assertWireError(
      'AmazonSQS.CreateQueue',
      '{"QueueName": "typed", "Attributes": "x"}',
      invalidValue(/Attributes/),
    );
    await assertWireError('AmazonSQS.CreateQueue', '{"QueueName": "typed", "Attributes": {"VisibilityTimeout": 5}}', {
      status: 400,
      type: 'InvalidAttributeValue',
      code: 'InvalidAttributeValue',
      message: 'Invalid value for the parameter VisibilityTimeout.',
    });
    await assertWireError(
      'AmazonSQS.ReceiveMessage',
      q({ MaxNumberOfMessages: '5' }),
      invalidValue(/MaxNumberOfMessages/),
    );
    await assertWireError('AmazonSQS.ReceiveMessage', q({ WaitTimeSeconds: 2.5 }), invalidValue(/WaitTimeSeconds/));
    await assertWireError('AmazonSQS.ListQueues', '{"MaxResults": "x"}', invalidValue(/MaxResults/));
    await assertWireError('AmazonSQS.GetQueueAttributes', q({ AttributeNames: 'All' }), invalidValue(/AttributeNames/));
    await assertWireError('AmazonSQS.SendMessage', q({ MessageBody: 42 }), invalidValue(/MessageBody/));
    await assertWireError('AmazonSQS.SendMessage', q({ MessageBody: 'x', MessageAttributes: [] }), invalidValue());
    await assertWireError(
      'AmazonSQS.SendMessage',
      q({ MessageBody: 'x', MessageAttributes: { a: null } }),
      invalidValue(/'a'/),
    );
    await assertWireError(
      'AmazonSQS.SendMessage',
      q({ MessageBody: 'x', DelaySeconds: '1' }),
      invalidValue(/DelaySeconds/),
    );
    await assertWireError('AmazonSQS.SendMessageBatch', q({ Entries: {} }), invalidValue(/Entries/));
    await assertWireError('AmazonSQS.SendMessageBatch', q({ Entries: [null] }), {
      status: 400,
      type: 'InvalidBatchEntryId',
      code: 'AWS.SimpleQueueService.InvalidBatchEntryId',
    });
    await assertWireError('AmazonSQS.TagQueue', q({ Tags: { a: 5 } }), invalidValue());
    await assertWireError('AmazonSQS.DeleteMessage', q({ ReceiptHandle: 5 }), {
      status: 404,
      type: 'ReceiptHandleIsInvalid',
      code: 'ReceiptHandleIsInvalid',
    });
    // None of it created or sent anything.
    const res = await rawJson(
      server.url,
      'AmazonSQS.GetQueueAttributes',
      q({ AttributeNames: ['ApproximateNumberOfMessages'] }),
    );
    assert.deepEqual(res.json, { Attributes: { ApproximateNumberOfMessages: '0' } });
    assert.equal((await rawJson(server.url, 'AmazonSQS.GetQueueUrl', '{"QueueName": "typed"}')).status, 400);
  });

  test('names of object properties are not attributes', async () => {
    for (const name of ['toString', '__proto__', 'constructor']) {
      const attrs = `{"${name}": "1"}`;
      await assertWireError('AmazonSQS.CreateQueue', `{"QueueName": "proto", "Attributes": ${attrs}}`, {
        status: 400,
        type: 'InvalidAttributeName',
        code: 'InvalidAttributeName',
        message: `Unknown Attribute ${name}.`,
      });
      await assertWireError(
        'AmazonSQS.SetQueueAttributes',
        `{"QueueUrl": ${JSON.stringify(queueUrl)}, "Attributes": ${attrs}}`,
        {
          status: 400,
          type: 'InvalidAttributeName',
          code: 'InvalidAttributeName',
          message: `Unknown Attribute ${name}.`,
        },
      );
      await assertWireError(
        'AmazonSQS.GetQueueAttributes',
        JSON.stringify({ QueueUrl: queueUrl, AttributeNames: [name] }),
        {
          status: 400,
          type: 'InvalidAttributeName',
          code: 'InvalidAttributeName',
          message: `Unknown Attribute ${name}.`,
        },
      );
    }
  });

  test('an attribute value that its DataType does not use is dropped', async () => {
    const q = await createQueue(sqs, 'stray-values');
    const sent = await rawJson(
      server.url,
      'AmazonSQS.SendMessage',
      JSON.stringify({
        QueueUrl: q,
        MessageBody: 'x',
        MessageAttributes: { s: { DataType: 'String', StringValue: 'v', BinaryValue: 'AAAA' } },
      }),
    );
    assert.equal(sent.status, 200, sent.text);
    const got = await rawJson(
      server.url,
      'AmazonSQS.ReceiveMessage',
      JSON.stringify({ QueueUrl: q, MessageAttributeNames: ['All'] }),
    );
    const [m] = got.json.Messages as { MessageAttributes: unknown; MD5OfMessageAttributes: string }[];
    assert.deepEqual(m!.MessageAttributes, { s: { DataType: 'String', StringValue: 'v' } });
    assert.equal(m!.MD5OfMessageAttributes, sent.json.MD5OfMessageAttributes);
  });

  test('a queue URL with broken percent-encoding names no queue', async () => {
    await assertWireError(
      'AmazonSQS.SendMessage',
      JSON.stringify({ QueueUrl: `${server.url}/000000000000/%E0%A4%A`, MessageBody: 'x' }),
      {
        status: 400,
        type: 'QueueDoesNotExist',
        code: 'AWS.SimpleQueueService.NonExistentQueue',
      },
    );
  });

  test('a missing queue', async () => {
    await assertWireError('AmazonSQS.GetQueueUrl', '{"QueueName": "nope"}', {
      status: 400,
      type: 'QueueDoesNotExist',
      code: 'AWS.SimpleQueueService.NonExistentQueue',
      message: 'The specified queue does not exist.',
    });
  });
});

describe('successful answers on the wire', () => {
  test('are JSON with the JSON content type', async () => {
    const res = await rawJson(server.url, 'AmazonSQS.GetQueueUrl', '{"QueueName": "wire"}');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/x-amz-json-1.0');
    assert.equal(res.headers.get('x-amzn-query-error'), null);
    assert.deepEqual(res.json, { QueueUrl: queueUrl });
  });

  test('a JSON request may be posted to the queue URL', async () => {
    const res = await rawJson(
      queueUrl,
      'AmazonSQS.SendMessage',
      JSON.stringify({ QueueUrl: queueUrl, MessageBody: 'via queue url' }),
    );
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.MD5OfMessageBody, md5('via queue url'));
    const recv = await rawJson(server.url, 'AmazonSQS.ReceiveMessage', JSON.stringify({ QueueUrl: queueUrl }));
    assert.equal((recv.json.Messages as { Body: string }[])[0]!.Body, 'via queue url');
  });
});

describe('request size', () => {
  test('a body larger than the limit gets 413 and a JSON error, and the server keeps serving', async () => {
    const body = JSON.stringify({ QueueUrl: queueUrl, MessageBody: 'a'.repeat(7 * 1024 * 1024) });
    const res = await rawJson(server.url, 'AmazonSQS.SendMessage', body);
    assert.equal(res.status, 413);
    assert.equal(res.headers.get('x-amzn-query-error'), 'RequestEntityTooLarge;Sender');
    assert.equal(res.json.__type, 'com.amazonaws.sqs#RequestEntityTooLarge');
    assert.match(res.json.message as string, /larger than/);
    const after = await rawJson(
      server.url,
      'AmazonSQS.GetQueueAttributes',
      JSON.stringify({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
    );
    assert.equal(after.status, 200);
  });

  test('a 1 MiB message with JSON escaping still fits', async () => {
    // Every '"' doubles in JSON, so the wire body is about 2 MiB.
    const res = await rawJson(
      server.url,
      'AmazonSQS.SendMessage',
      JSON.stringify({ QueueUrl: queueUrl, MessageBody: '"'.repeat(1_048_576) }),
    );
    assert.equal(res.status, 200, res.text);
  });
});

describe('Host header', () => {
  /** A raw request with a Host header of our choosing (fetch does not let us set one). */
  function postWithHost(host: string, target: string, body: string): Promise<Record<string, unknown>> {
    const { port } = new URL(server.url);
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/',
          headers: { host, 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': target },
        },
        (res) => {
          let text = '';
          res.on('data', (d) => (text += d));
          res.on('end', () => resolve(JSON.parse(text) as Record<string, unknown>));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  test('queue URLs follow the Host the client used', async () => {
    const created = await postWithHost('sqs.example.com:4566', 'AmazonSQS.CreateQueue', '{"QueueName": "hosted"}');
    assert.equal(created.QueueUrl, 'http://sqs.example.com:4566/000000000000/hosted');
    const found = await postWithHost('other.test', 'AmazonSQS.GetQueueUrl', '{"QueueName": "hosted"}');
    assert.equal(found.QueueUrl, 'http://other.test/000000000000/hosted');
    const listed = await postWithHost('other.test', 'AmazonSQS.ListQueues', '{"QueueNamePrefix": "hosted"}');
    assert.deepEqual(listed.QueueUrls, ['http://other.test/000000000000/hosted']);
    // A URL naming another host still reaches the queue: only the path counts.
    const sent = await postWithHost(
      'third.test',
      'AmazonSQS.SendMessage',
      JSON.stringify({ QueueUrl: 'http://sqs.example.com:4566/000000000000/hosted', MessageBody: 'x' }),
    );
    assert.equal(sent.MD5OfMessageBody, md5('x'));
  });

  test('an SDK client addressing the server as localhost gets localhost URLs', async () => {
    const local = sqsClient(server.url.replace('127.0.0.1', 'localhost'));
    try {
      const url = await createQueue(local, 'via-localhost');
      assert.equal(url, `${server.url.replace('127.0.0.1', 'localhost')}/000000000000/via-localhost`);
      const { QueueUrls } = await sqs.send(new ListQueuesCommand({ QueueNamePrefix: 'via-localhost' }));
      assert.deepEqual(QueueUrls, [`${server.url}/000000000000/via-localhost`]);
    } finally {
      local.destroy();
    }
  });
});

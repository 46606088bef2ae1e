import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { SDK_HEADER } from '../e2e/helpers.js';

// Raw HTTP against the Query protocol; expectations from real SQS (scratch/sqs-errors.md A4, B6, C).
const xml = new XMLParser();

describe('Query protocol over raw HTTP', () => {
  let server: ServerProcess;
  let queueUrl: string;
  let otherUrl: string;
  const query = async (url: string, params: Record<string, string>, init: RequestInit = {}) => {
    const res = await fetch(`${url}?${new URLSearchParams(params)}`, init);
    return { res, text: await res.text() };
  };
  const post = async (url: string, params: Record<string, string>) => {
    const res = await fetch(url, {
      method: 'POST',
      headers: SDK_HEADER,
      body: new URLSearchParams({ Version: '2012-11-05', ...params }),
    });
    return { res, text: await res.text() };
  };
  const errorOf = (text: string) => {
    assert.equal(XMLValidator.validate(text), true, text);
    return xml.parse(text).ErrorResponse.Error as { Type: string; Code: string; Message: string };
  };

  before(async () => {
    server = await startServerProcess({ storage: 'memory' });
    const created = await post(`${server.url}/`, { Action: 'CreateQueue', QueueName: 'raw' });
    queueUrl = xml.parse(created.text).CreateQueueResponse.CreateQueueResult.QueueUrl;
    const other = await post(`${server.url}/`, { Action: 'CreateQueue', QueueName: 'raw-other' });
    otherUrl = xml.parse(other.text).CreateQueueResponse.CreateQueueResult.QueueUrl;
  });
  after(async () => {
    await server.stop();
    server.cleanup();
  });

  it('answers an unknown action with InvalidAction', async () => {
    const { res, text } = await query(queueUrl, { Action: 'FooBar', Version: '2012-11-05' });
    assert.equal(res.status, 400);
    assert.deepEqual(errorOf(text), {
      Type: 'Sender',
      Code: 'InvalidAction',
      Message: 'The action FooBar is not valid for this endpoint.',
      Detail: '',
    });
    assert.equal(res.headers.get('x-amzn-query-error'), 'InvalidAction;Sender');
  });

  it('answers a missing parameter with MissingParameter', async () => {
    const { res, text } = await query(queueUrl, { Action: 'SendMessage' });
    assert.equal(res.status, 400);
    assert.equal(errorOf(text).Code, 'MissingParameter');
    assert.equal(errorOf(text).Message, 'The request must contain the parameter MessageBody.');
  });

  it('answers an unknown attribute name with InvalidAttributeName', async () => {
    const { text } = await query(queueUrl, { Action: 'GetQueueAttributes', 'AttributeName.1': 'Foobar' });
    assert.equal(errorOf(text).Code, 'InvalidAttributeName');
    assert.equal(errorOf(text).Message, 'Unknown Attribute Foobar.');
  });

  it('answers a request to a missing queue with the Query wording of NonExistentQueue', async () => {
    const { res, text } = await query(`${server.url}/000000000000/absent`, {
      Action: 'GetQueueAttributes',
      'AttributeName.1': 'QueueArn',
    });
    assert.equal(res.status, 400);
    assert.equal(errorOf(text).Code, 'AWS.SimpleQueueService.NonExistentQueue');
    assert.equal(errorOf(text).Message, 'The specified queue does not exist for this wsdl version.');
    assert.equal(res.headers.get('x-amzn-query-error'), 'AWS.SimpleQueueService.NonExistentQueue;Sender');
  });

  it('answers a request without an Action with a 404 UnknownOperationException, in XML even to Accept: application/json', async () => {
    for (const headers of [{}, { accept: 'application/json' }] as Record<string, string>[]) {
      const res = await fetch(queueUrl, { headers });
      assert.equal(res.status, 404);
      assert.match(await res.text(), /<UnknownOperationException/);
    }
  });

  it('refuses CreateQueue and ListQueues at a queue URL', async () => {
    for (const Action of ['CreateQueue', 'ListQueues']) {
      const { res, text } = await query(queueUrl, { Action, QueueName: 'x' });
      assert.equal(res.status, 400);
      assert.equal(errorOf(text).Code, 'InvalidAction');
      assert.equal(errorOf(text).Message, `The action ${Action} is not valid for this endpoint.`);
    }
  });

  it('takes the queue from the URL path, unless a QueueUrl parameter names another', async () => {
    const sent = await query(queueUrl, { Action: 'SendMessage', MessageBody: 'by path' });
    assert.equal(sent.res.status, 200, sent.text);
    const redirected = await post(queueUrl, { Action: 'SendMessage', MessageBody: 'by param', QueueUrl: otherUrl });
    assert.equal(redirected.res.status, 200, redirected.text);
    const count = async (url: string) => {
      const { text } = await query(url, {
        Action: 'GetQueueAttributes',
        'AttributeName.1': 'ApproximateNumberOfMessages',
      });
      return xml.parse(text).GetQueueAttributesResponse.GetQueueAttributesResult.Attribute.Value;
    };
    assert.equal(await count(queueUrl), 1);
    assert.equal(await count(otherUrl), 1);
    // GetQueueUrl sent to one queue's URL resolves whichever queue it names.
    const { text } = await query(queueUrl, { Action: 'GetQueueUrl', QueueName: 'raw-other' });
    assert.equal(xml.parse(text).GetQueueUrlResponse.GetQueueUrlResult.QueueUrl, otherUrl);
  });

  it('wraps results in the SQS namespace with ResponseMetadata, and carries CR through intact', async () => {
    const body = 'a\r\nb\rc & <d>';
    const sent = await post(`${server.url}/`, { Action: 'SendMessage', QueueUrl: otherUrl, MessageBody: body });
    assert.match(
      sent.text,
      /^<\?xml version="1.0"\?><SendMessageResponse xmlns="http:\/\/queue.amazonaws.com\/doc\/2012-11-05\/"><SendMessageResult>/,
    );
    assert.equal(
      xml.parse(sent.text).SendMessageResponse.ResponseMetadata.RequestId,
      sent.res.headers.get('x-amzn-requestid'),
    );
    const { text } = await post(`${server.url}/`, {
      Action: 'ReceiveMessage',
      QueueUrl: otherUrl,
      MaxNumberOfMessages: '10',
    });
    assert.ok(text.includes('<Body>a&#xD;\nb&#xD;c &amp; &lt;d&gt;</Body>'), text);
  });

  it('serves the Redrive-only PeekMessages through its extension shapes', async () => {
    const created = await post(`${server.url}/`, { Action: 'CreateQueue', QueueName: 'raw-peek' });
    const url = xml.parse(created.text).CreateQueueResponse.CreateQueueResult.QueueUrl;
    await query(url, { Action: 'SendMessage', MessageBody: 'look, do not touch' });
    const { res, text } = await query(url, { Action: 'PeekMessages' });
    assert.equal(res.status, 200, text);
    const message = xml.parse(text).PeekMessagesResponse.PeekMessagesResult.Message;
    assert.equal(message.Body, 'look, do not touch');
    assert.equal(message.State, 'VISIBLE');
  });

  it('serves RejectMessage, and PeekMessages shows the death history (one <Death> element per entry)', async () => {
    const create = async (params: Record<string, string>) =>
      xml.parse((await post(`${server.url}/`, { Action: 'CreateQueue', ...params })).text).CreateQueueResponse
        .CreateQueueResult.QueueUrl as string;
    const dlq = await create({ QueueName: 'raw-dlq' });
    const source = await create({
      QueueName: 'raw-source',
      'Attribute.1.Name': 'RedrivePolicy',
      'Attribute.1.Value': JSON.stringify({
        deadLetterTargetArn: 'arn:aws:sqs:us-east-1:000000000000:raw-dlq',
        maxReceiveCount: 5,
      }),
    });
    await query(source, { Action: 'SendMessage', MessageBody: 'unprocessable' });
    const received = await query(source, { Action: 'ReceiveMessage' });
    const handle = xml.parse(received.text).ReceiveMessageResponse.ReceiveMessageResult.Message.ReceiptHandle;
    const rejected = await query(source, {
      Action: 'RejectMessage',
      ReceiptHandle: handle,
      Reason: 'bad <input> & more',
    });
    assert.equal(rejected.res.status, 200, rejected.text);
    const { text } = await query(dlq, { Action: 'PeekMessages' });
    const message = xml.parse(text).PeekMessagesResponse.PeekMessagesResult.Message;
    assert.equal(message.Body, 'unprocessable');
    assert.equal(message.Death.reason, 'rejected');
    assert.equal(message.Death.rejectReason, 'bad <input> & more');
    assert.equal(message.Death.count, 1);
    assert.equal(message.LastDeath.queue, 'raw-source');
  });

  // Receipt handles are sealed with a server key: one with a made-up token (or a made-up
  // queue id and position) is not a genuine handle and deletes nothing.
  it('does not let a forged receipt handle delete a message', async () => {
    const created = await post(`${server.url}/`, { Action: 'CreateQueue', QueueName: 'raw-forge' });
    const url = xml.parse(created.text).CreateQueueResponse.CreateQueueResult.QueueUrl;
    await query(url, { Action: 'SendMessage', MessageBody: 'keep me' });
    const received = xml.parse((await query(url, { Action: 'ReceiveMessage' })).text).ReceiveMessageResponse
      .ReceiveMessageResult;
    // The real handle's queue id and position, with a token of our own.
    const [, queueId, seq, , mac] = Buffer.from(received.Message.ReceiptHandle, 'base64').toString().split('|');
    const forged = Buffer.from(`rd1|${queueId}|${seq}|AAAAAAAAAAAAAAAA|${mac}`).toString('base64');
    const { res } = await query(url, { Action: 'DeleteMessage', ReceiptHandle: forged });
    assert.notEqual(res.status, 200);
    const { text } = await query(url, {
      Action: 'GetQueueAttributes',
      'AttributeName.1': 'ApproximateNumberOfMessagesNotVisible',
    });
    assert.equal(xml.parse(text).GetQueueAttributesResponse.GetQueueAttributesResult.Attribute.Value, 1);
  });

  it('answers an empty result with an empty result element', async () => {
    const { text } = await post(`${server.url}/`, { Action: 'ListQueues', QueueNamePrefix: 'none' });
    assert.match(text, /<ListQueuesResponse [^>]+><ListQueuesResult\/><ResponseMetadata>/);
  });

  it('refuses more form fields than any valid request has, and oversized headers, cleanly', async () => {
    const many = Object.fromEntries(Array.from({ length: 2001 }, (_, i) => [`AttributeName.${i + 1}`, 'All']));
    const { res, text } = await post(`${server.url}/`, { Action: 'ListQueues', ...many });
    assert.equal(res.status, 400);
    assert.equal(errorOf(text).Code, 'MalformedQueryString');
    const big = await fetch(`${server.url}/?Action=ListQueues`, { headers: { 'x-padding': 'a'.repeat(64 * 1024) } });
    assert.equal(big.status, 431);
  });

  it('answers an oversized body in XML for Query and in JSON for JSON', async () => {
    const big = new Uint8Array(7 * 1024 * 1024).fill(97);
    const q = await fetch(`${server.url}/`, {
      method: 'POST',
      body: big,
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...SDK_HEADER },
    });
    assert.equal(q.status, 413);
    assert.equal(errorOf(await q.text()).Code, 'RequestEntityTooLarge');
    const j = await fetch(`${server.url}/`, {
      method: 'POST',
      body: big,
      headers: { 'x-amz-target': 'AmazonSQS.ListQueues', 'content-type': 'application/x-amz-json-1.0' },
    });
    assert.equal(j.status, 413);
    assert.equal(JSON.parse(await j.text()).__type, 'com.amazonaws.sqs#RequestEntityTooLarge');
  });
});

describe('JSON protocol error headers', () => {
  let server: ServerProcess;
  before(async () => (server = await startServerProcess({ storage: 'memory' })));
  after(async () => {
    await server.stop();
    server.cleanup();
  });

  it('sends x-amzn-query-error with and without x-amzn-query-mode', async () => {
    for (const mode of [{}, { 'x-amzn-query-mode': 'true' }] as Record<string, string>[]) {
      const res = await fetch(`${server.url}/`, {
        method: 'POST',
        headers: { 'x-amz-target': 'AmazonSQS.GetQueueUrl', 'content-type': 'application/x-amz-json-1.0', ...mode },
        body: JSON.stringify({ QueueName: 'absent' }),
      });
      assert.equal(res.status, 400);
      assert.equal(res.headers.get('x-amzn-query-error'), 'AWS.SimpleQueueService.NonExistentQueue;Sender');
      assert.equal(res.headers.get('content-type'), 'application/x-amz-json-1.0');
      assert.deepEqual(await res.json(), {
        __type: 'com.amazonaws.sqs#QueueDoesNotExist',
        message: 'The specified queue does not exist.',
      });
    }
  });
});

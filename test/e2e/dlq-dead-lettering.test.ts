/** When and how messages are dead-lettered, and the PeekMessages extension. */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { useServerProcess, type ServerProcess } from '../support/server-process.js';
import { counts, createQueue, rawJson, receive } from './helpers.js';

let server: ServerProcess;
let sqs: SQSClient;

useServerProcess({ storage: 'memory', manualClock: true }, (s) => {
  server = s;
  sqs = s.client();
});

const arn = (name: string) => `arn:aws:sqs:us-east-1:000000000000:${name}`;
const policy = (target: string, maxReceiveCount: number) =>
  JSON.stringify({ deadLetterTargetArn: target, maxReceiveCount });

async function pair(name: string, maxReceiveCount: number, dlqAttributes: Record<string, string> = {}) {
  const dlq = await createQueue(sqs, `${name}-dlq`, dlqAttributes);
  const src = await createQueue(sqs, name, { RedrivePolicy: policy(arn(`${name}-dlq`), maxReceiveCount) });
  return { dlq, src };
}

async function peek(QueueUrl: string, extra: Record<string, unknown> = {}) {
  const res = await rawJson(server.url, 'AmazonSQS.PeekMessages', JSON.stringify({ QueueUrl, ...extra }));
  assert.equal(res.status, 200, res.text);
  return res.json as { Messages: Record<string, any>[]; NextToken?: string };
}

describe('the dead-lettering point', () => {
  for (const max of [1, 2, 5, 10]) {
    test(`maxReceiveCount ${max}: ${max} receives deliver the message, the next attempt moves it`, async () => {
      const { dlq, src } = await pair(`point-${max}`, max);
      await sqs.send(new SendMessageCommand({ QueueUrl: src, MessageBody: `m${max}` }));
      for (let i = 1; i <= max; i++) {
        const got = await receive(sqs, src, {
          VisibilityTimeout: 0,
          MessageSystemAttributeNames: ['ApproximateReceiveCount'],
        });
        assert.equal(got.length, 1, `receive ${i}`);
        assert.equal(got[0]!.Attributes!.ApproximateReceiveCount, String(i));
      }
      assert.equal((await counts(sqs, dlq)).visible, 0, 'not moved before the next receive attempt');
      assert.deepEqual(await receive(sqs, src, { VisibilityTimeout: 0 }), []);
      assert.deepEqual(await counts(sqs, src), { visible: 0, inflight: 0, delayed: 0 });
      assert.equal((await counts(sqs, dlq)).visible, 1);
    });
  }

  test('a deleted message is never dead-lettered, and other messages fill the receive', async () => {
    const { dlq, src } = await pair('fill', 1);
    await sqs.send(new SendMessageCommand({ QueueUrl: src, MessageBody: 'old' }));
    await receive(sqs, src, { VisibilityTimeout: 0 });
    await sqs.send(new SendMessageCommand({ QueueUrl: src, MessageBody: 'new' }));
    const got = await receive(sqs, src, { VisibilityTimeout: 0, MaxNumberOfMessages: 10 });
    assert.deepEqual(
      got.map((m) => m.Body),
      ['new'],
    );
    assert.equal((await counts(sqs, dlq)).visible, 1);
  });
});

describe('a dead-lettered message', () => {
  test('carries DeadLetterQueueSourceArn and keeps its SentTimestamp (standard queue)', async () => {
    const { dlq, src } = await pair('attrs', 1);
    const sentAt = await server.advanceClock(0);
    const { MessageId } = await sqs.send(
      new SendMessageCommand({
        QueueUrl: src,
        MessageBody: 'payload',
        MessageAttributes: { kind: { DataType: 'String', StringValue: 'order' } },
      }),
    );
    await server.advanceClock(5_000);
    await receive(sqs, src, { VisibilityTimeout: 0 });
    await server.advanceClock(5_000);
    assert.deepEqual(await receive(sqs, src), []);
    const [m] = await receive(sqs, dlq, { MessageSystemAttributeNames: ['All'], MessageAttributeNames: ['All'] });
    assert.equal(m!.MessageId, MessageId);
    assert.equal(m!.Body, 'payload');
    assert.equal(m!.Attributes!.DeadLetterQueueSourceArn, arn('attrs'));
    assert.equal(m!.Attributes!.SentTimestamp, String(sentAt));
    assert.equal(m!.MessageAttributes!.kind!.StringValue, 'order');
  });

  test('expires by the retention of the DLQ counted from the original send', async () => {
    const { dlq, src } = await pair('retention', 1, { MessageRetentionPeriod: '60' });
    await sqs.send(new SendMessageCommand({ QueueUrl: src, MessageBody: 'ageing' }));
    await server.advanceClock(50_000);
    await receive(sqs, src, { VisibilityTimeout: 0 });
    await receive(sqs, src, { VisibilityTimeout: 0 });
    assert.equal((await counts(sqs, dlq)).visible, 1);
    await server.advanceClock(11_000);
    assert.deepEqual(await receive(sqs, dlq), [], 'older than 60 s since its original send');
  });
});

describe('a dead-lettered FIFO message', () => {
  test('gets a new enqueue time and its message id as deduplication id, and keeps its group', async () => {
    const dlq = await createQueue(sqs, 'fifo-dlq.fifo', { FifoQueue: 'true' });
    const src = await createQueue(sqs, 'fifo-src.fifo', {
      FifoQueue: 'true',
      RedrivePolicy: policy(arn('fifo-dlq.fifo'), 1),
    });
    const sentAt = await server.advanceClock(0);
    const { MessageId } = await sqs.send(
      new SendMessageCommand({
        QueueUrl: src,
        MessageBody: 'fifo poison',
        MessageGroupId: 'g1',
        MessageDeduplicationId: 'd1',
      }),
    );
    await receive(sqs, src, { VisibilityTimeout: 0 });
    const movedAt = await server.advanceClock(7_000);
    assert.deepEqual(await receive(sqs, src, { VisibilityTimeout: 0 }), []);
    const [m] = await receive(sqs, dlq, { MessageSystemAttributeNames: ['All'] });
    assert.equal(m!.MessageId, MessageId);
    assert.equal(m!.Attributes!.MessageGroupId, 'g1');
    assert.equal(m!.Attributes!.MessageDeduplicationId, MessageId);
    assert.equal(m!.Attributes!.DeadLetterQueueSourceArn, arn('fifo-src.fifo'));
    assert.equal(m!.Attributes!.SentTimestamp, String(movedAt));
    assert.notEqual(m!.Attributes!.SentTimestamp, String(sentAt));
  });
});

describe('PeekMessages (extension)', () => {
  test('shows body, attributes, receive count, timestamps and source, and changes nothing', async () => {
    const { dlq, src } = await pair('peek', 2);
    const sentAt = await server.advanceClock(0);
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: src,
        MessageBody: '{"id":1}',
        MessageAttributes: { tenant: { DataType: 'String', StringValue: 'acme' } },
      }),
    );
    await receive(sqs, src, { VisibilityTimeout: 0 });
    await receive(sqs, src, { VisibilityTimeout: 0 });
    const deadAt = await server.advanceClock(1_000);
    await receive(sqs, src, { VisibilityTimeout: 0 });
    for (let i = 0; i < 5; i++) {
      const { Messages } = await peek(dlq);
      assert.equal(Messages.length, 1);
      const m = Messages[0]!;
      assert.equal(m.Body, '{"id":1}');
      assert.equal(m.State, 'VISIBLE');
      assert.equal(m.Attributes.ApproximateReceiveCount, '2');
      assert.equal(m.Attributes.SentTimestamp, String(sentAt));
      assert.equal(m.Attributes.DeadLetterQueueSourceArn, arn('peek'));
      assert.equal(m.DeadLetteredTimestamp, deadAt);
      assert.deepEqual(m.MessageAttributes, { tenant: { DataType: 'String', StringValue: 'acme' } });
    }
    // Peeking counted as no receive: the message is still visible with the same count.
    const [got] = await receive(sqs, dlq, { MessageSystemAttributeNames: ['ApproximateReceiveCount'] });
    assert.equal(got!.Attributes!.ApproximateReceiveCount, '3');
    const { Messages } = await peek(dlq);
    assert.equal(Messages[0]!.State, 'IN_FLIGHT');
  });

  test('pages by position with MaxResults and NextToken, oldest first', async () => {
    const url = await createQueue(sqs, 'peek-pages');
    for (let i = 0; i < 7; i++) await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: `b${i}` }));
    const bodies: string[][] = [];
    let token: string | undefined;
    do {
      const page = await peek(url, { MaxResults: 3, ...(token ? { NextToken: token } : {}) });
      bodies.push(page.Messages.map((m) => m.Body));
      token = page.NextToken;
    } while (token);
    assert.deepEqual(bodies, [['b0', 'b1', 'b2'], ['b3', 'b4', 'b5'], ['b6']]);
    assert.equal((await counts(sqs, url)).visible, 7);
  });

  test('rejects bad input with SQS errors', async () => {
    const res = await rawJson(
      server.url,
      'AmazonSQS.PeekMessages',
      JSON.stringify({ QueueUrl: `${server.url}/000000000000/nope` }),
    );
    assert.equal(res.status, 400);
    assert.equal(res.json.__type, 'com.amazonaws.sqs#QueueDoesNotExist');
    const url = await createQueue(sqs, 'peek-bad');
    const tooMany = await rawJson(
      server.url,
      'AmazonSQS.PeekMessages',
      JSON.stringify({ QueueUrl: url, MaxResults: 101 }),
    );
    assert.equal(tooMany.status, 400);
    assert.match(String(tooMany.json.message), /MaxResults/);
  });
});

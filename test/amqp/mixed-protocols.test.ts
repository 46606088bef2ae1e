/**
 * One broker for both protocols: an AMQP queue is a Redrive queue. SQS sends reach AMQP
 * consumers, AMQP publishes reach SQS receivers (text as it is, binary as base64), an
 * AMQP rejection dead-letters through a queue's RedrivePolicy with its history, and a
 * rejection with nowhere to go is dropped and logged as RabbitMQ would drop it.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import type { ChannelModel, ConsumeMessage } from 'amqplib';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SetQueueAttributesCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { pause, useMixedServer, type AmqpServer } from './support.js';

describe('SQS and AMQP on the same queues', () => {
  const server = useMixedServer();
  let redrive: AmqpServer;
  let conn: ChannelModel;
  let sqs: SQSClient;
  let url: (q: string) => string;
  const depth = async (q: string) =>
    Number(
      (
        await sqs.send(
          new GetQueueAttributesCommand({
            QueueUrl: url(q),
            AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
          }),
        )
      ).Attributes?.ApproximateNumberOfMessages,
    );

  before(() => ({ redrive, conn, sqs, url } = server()));

  test('an SQS send to a queue declared over AMQP reaches an AMQP consumer; its ack deletes it', async () => {
    const ch = await conn.createChannel();
    await ch.assertQueue('mixed-in');
    await sqs.send(new SendMessageCommand({ QueueUrl: url('mixed-in'), MessageBody: 'from SQS ✓' }));
    const got = await new Promise<ConsumeMessage>((resolve) => void ch.consume('mixed-in', (m) => m && resolve(m)));
    assert.equal(got.content.toString(), 'from SQS ✓');
    assert.equal(got.fields.exchange, '');
    assert.equal(got.fields.routingKey, 'mixed-in');
    assert.equal(got.fields.redelivered, false);
    ch.ack(got);
    await pause(200);
    const left = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url('mixed-in'), WaitTimeSeconds: 0 }));
    assert.equal(left.Messages, undefined, 'acknowledged means deleted');
    await ch.close();
  });

  test('an AMQP consumer consumes from a queue made over SQS', async () => {
    await sqs.send(new CreateQueueCommand({ QueueName: 'made-by-sqs' }));
    await sqs.send(new SendMessageCommand({ QueueUrl: url('made-by-sqs'), MessageBody: 'x' }));
    const ch = await conn.createChannel();
    const ok = await ch.checkQueue('made-by-sqs');
    assert.equal(ok.messageCount, 1);
    const m = await ch.get('made-by-sqs', { noAck: true });
    assert.ok(m);
    assert.equal(m.content.toString(), 'x');
    await ch.close();
  });

  test('AMQP publishes are received over SQS: text unchanged, binary as base64, and SQS sees in-flight AMQP deliveries', async () => {
    const ch = await conn.createConfirmChannel();
    await ch.assertQueue('mixed-out');
    const binary = Buffer.from([0, 1, 2, 255, 254]);
    ch.sendToQueue('mixed-out', Buffer.from('héllo'), { headers: { a: 1 }, contentType: 'text/plain' });
    ch.sendToQueue('mixed-out', binary);
    await ch.waitForConfirms();
    const out = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: url('mixed-out'), MaxNumberOfMessages: 10, VisibilityTimeout: 0 }),
    );
    assert.deepEqual(
      out.Messages?.map((m) => m.Body),
      ['héllo', binary.toString('base64')],
    );
    // The same messages come back to AMQP with their bytes and properties.
    const first = await ch.get('mixed-out');
    const second = await ch.get('mixed-out');
    assert.ok(first && second);
    assert.equal(first.content.toString(), 'héllo');
    assert.equal(first.properties.contentType, 'text/plain');
    assert.deepEqual(first.properties.headers, { a: 1 });
    assert.deepEqual(second.content, binary);
    assert.equal(await depth('mixed-out'), 0, 'both are in flight with the AMQP channel');
    ch.ack(second, true);
    await ch.close();
  });

  test('basic.reject on a queue with a RedrivePolicy dead-letters it with reason rejected', async () => {
    await sqs.send(new CreateQueueCommand({ QueueName: 'mixed-dlq' }));
    const ch = await conn.createConfirmChannel();
    await ch.assertQueue('mixed-src');
    await sqs.send(
      new SetQueueAttributesCommand({
        QueueUrl: url('mixed-src'),
        Attributes: {
          RedrivePolicy: JSON.stringify({
            deadLetterTargetArn: 'arn:aws:sqs:us-east-1:000000000000:mixed-dlq',
            maxReceiveCount: 10,
          }),
        },
      }),
    );
    ch.sendToQueue('mixed-src', Buffer.from('doomed'));
    await ch.waitForConfirms();
    const m = await ch.get('mixed-src');
    assert.ok(m);
    ch.reject(m, false);
    await pause(200);
    const dead = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: url('mixed-dlq'),
        MessageSystemAttributeNames: ['RedriveDeathHistory' as never],
        WaitTimeSeconds: 1,
      }),
    );
    assert.equal(dead.Messages?.[0]?.Body, 'doomed');
    const history = JSON.parse(dead.Messages![0]!.Attributes!['RedriveDeathHistory' as never]!) as {
      queue: string;
      reason: string;
      count: number;
    }[];
    assert.deepEqual(
      history.map((d) => [d.queue, d.reason, d.count]),
      [['mixed-src', 'rejected', 1]],
    );
    await ch.close();
  });

  test('basic.reject without a dead-letter target drops the message and logs the drop', async () => {
    const ch = await conn.createConfirmChannel();
    await ch.assertQueue('mixed-drop');
    ch.sendToQueue('mixed-drop', Buffer.from('gone'));
    await ch.waitForConfirms();
    const m = await ch.get('mixed-drop');
    assert.ok(m);
    ch.nack(m, false, false);
    await pause(200);
    assert.equal(await depth('mixed-drop'), 0);
    assert.equal((await ch.checkQueue('mixed-drop')).messageCount, 0);
    assert.match(
      redrive.server.output(),
      /"queue":"mixed-drop"[^\n]*"reason":"rejected"[^\n]*"count":1[^\n]*messages dropped/,
    );
    await ch.close();
  });
});

/**
 * AMQP queue names are RabbitMQ's: any UTF-8 name up to 255 bytes (Celery's pidbox queues,
 * `app:events`, `tenant/orders`). Over SQS such a queue has a percent-encoded name in its
 * URL and ARN, and works like any other; SQS's CreateQueue keeps SQS's own name rule.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ListQueuesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import amqp from 'amqplib';
import { needs } from '../support/requirements.js';
import { sameOnBoth } from './both-brokers.js';
import { useAmqpServer } from './support.js';

const NAMES = [
  'celery@host.celery.pidbox',
  'app:events',
  'tenant/orders',
  'reply.celery.6f1c2a9e-1d7b-3c4e-9a0b-5e6f7a8b9c0d',
  'queue with spaces & symbols #%?',
  'ünïcödé-キュー',
  'x'.repeat(255),
];

/** Each name declared, published to and read back with amqplib: what the client saw. */
async function roundTrip(url: string, prefix: string) {
  const conn = await amqp.connect(url);
  const ch = await conn.createChannel();
  const out: unknown[] = [];
  for (const raw of NAMES) {
    const name = (prefix + raw).slice(0, 255);
    const ok = await ch.assertQueue(name);
    ch.sendToQueue(name, Buffer.from(`to ${raw.slice(0, 20)}`));
    await ch.checkQueue(name);
    const m = await ch.get(name, { noAck: true });
    await ch.deleteQueue(name);
    out.push([ok.queue === name, m ? m.content.toString() : null, m ? m.fields.routingKey === name : null]);
  }
  await conn.close();
  return out;
}

describe('AMQP queue names', () => {
  const server = useAmqpServer();

  test('any UTF-8 name up to 255 bytes is declared, published to and read, as on RabbitMQ', async (t) => {
    const got = await roundTrip(server().url, '');
    assert.deepEqual(
      got,
      NAMES.map((n) => [true, `to ${n.slice(0, 20)}`, true]),
    );
    await sameOnBoth(t, server().url, roundTrip);
  });

  test('over SQS: a percent-encoded URL and ARN, listed, sent to and received from', async () => {
    const { url } = server();
    const sqs = server().server.client();
    const conn = await amqp.connect(url);
    const ch = await conn.createChannel();
    for (const name of NAMES) await ch.assertQueue(name);
    for (const name of NAMES) {
      const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: name }));
      assert.equal(QueueUrl, `${server().server.url}/000000000000/${encodeURIComponent(name)}`);
      const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }));
      assert.equal(Attributes?.QueueArn, `arn:aws:sqs:us-east-1:000000000000:${encodeURIComponent(name)}`);
      await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: `over SQS to ${name}` }));
      const m = await ch.get(name, { noAck: true });
      assert.equal(m ? m.content.toString() : null, `over SQS to ${name}`);
      ch.sendToQueue(name, Buffer.from('over AMQP'));
      await ch.checkQueue(name);
      const { Messages } = await sqs.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 1 }));
      assert.equal(Messages?.[0]?.Body, 'over AMQP');
    }
    const { QueueUrls } = await sqs.send(new ListQueuesCommand({ QueueNamePrefix: 'app:' }));
    assert.deepEqual(QueueUrls, [`${server().server.url}/000000000000/app%3Aevents`]);
    const all = (await sqs.send(new ListQueuesCommand({}))).QueueUrls ?? [];
    for (const name of NAMES)
      assert.ok(all.includes(`${server().server.url}/000000000000/${encodeURIComponent(name)}`));
    for (const name of NAMES) await ch.deleteQueue(name);
    await conn.close();
  });

  test("SQS CreateQueue keeps SQS's name rule", async () => {
    const sqs = server().server.client();
    await assert.rejects(sqs.send(new CreateQueueCommand({ QueueName: 'app:events' })), (e: Error) =>
      /alphanumeric characters, hyphens, or underscores/.test(e.message),
    );
  });

  test('a name ending in .fifo is refused with 406 (an SQS FIFO queue name)', async () => {
    const conn = await amqp.connect(server().url);
    const ch = await conn.createChannel();
    ch.on('error', () => undefined);
    await assert.rejects(ch.assertQueue('orders.fifo'), /406/);
    await conn.close();
  });

  test('pika: a Celery pidbox queue name, declared, bound, published to and read', needs('pika'), async () => {
    const script = `
import sys, pika
c = pika.BlockingConnection(pika.URLParameters(sys.argv[1]))
ch = c.channel()
ch.exchange_declare("celery.pidbox", exchange_type="fanout")
q = "celery@worker-1.celery.pidbox"
ch.queue_declare(q, auto_delete=True)
ch.queue_bind(q, "celery.pidbox")
ch.basic_publish("celery.pidbox", "", b"ping")
for _ in range(50):
    m, p, b = ch.basic_get(q, auto_ack=True)
    if m:
        print(b.decode())
        break
    c.sleep(0.02)
ch.queue_delete(q)
c.close()
`;
    const python = process.env.REDRIVE_TEST_PYTHON ?? '/usr/bin/python3';
    const { stdout } = await promisify(execFile)(python, ['-c', script, server().url], { timeout: 30_000 });
    assert.equal(stdout.trim(), 'ping');
  });
});

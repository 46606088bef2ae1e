/**
 * SQS DeleteQueue of a queue with AMQP consumers cancels them at once, as AMQP's
 * queue.delete does: a client that announced consumer_cancel_notify gets basic.cancel
 * (amqplib, pika); one that did not is not sent it, as RabbitMQ does.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, test } from 'node:test';
import { DeleteQueueCommand } from '@aws-sdk/client-sqs';
import amqp from 'amqplib';
import { needs } from '../support/requirements.js';
import { RawClient } from './raw-client.js';
import { pause, useAmqpServer } from './support.js';

describe('SQS DeleteQueue and AMQP consumers', () => {
  const server = useAmqpServer();
  const deleteOverSqs = (name: string) =>
    server()
      .server.client()
      .send(new DeleteQueueCommand({ QueueUrl: `${server().server.url}/000000000000/${name}` }));

  test('amqplib: the consumer gets basic.cancel at once', async () => {
    const conn = await amqp.connect(server().url);
    const ch = await conn.createChannel();
    await ch.assertQueue('deleted-over-sqs');
    const cancelled = new Promise<string>((resolve) => {
      void ch.consume('deleted-over-sqs', (m) => {
        if (m === null) resolve('cancelled');
      });
    });
    await pause(100);
    await deleteOverSqs('deleted-over-sqs');
    assert.equal(await Promise.race([cancelled, pause(3000).then(() => 'no basic.cancel within 3 s')]), 'cancelled');
    await conn.close();
  });

  test('pika: the consumer gets basic.cancel at once', needs('pika'), async () => {
    const script = `
import sys, pika
c = pika.BlockingConnection(pika.URLParameters(sys.argv[1]))
ch = c.channel()
ch.queue_declare("deleted-over-sqs-pika")
ch.basic_consume("deleted-over-sqs-pika", lambda *a: None)
ch.add_on_cancel_callback(lambda frame: print("cancelled", flush=True))
print("ready", flush=True)
c.process_data_events(time_limit=3)
c.close()
`;
    const python = process.env.REDRIVE_TEST_PYTHON ?? '/usr/bin/python3';
    const child = spawn(python, ['-c', script, server().url]);
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    while (!out.includes('ready')) await pause(20);
    await deleteOverSqs('deleted-over-sqs-pika');
    await once(child, 'exit');
    assert.equal(out.trim(), 'ready\ncancelled');
  });

  test('a client without consumer_cancel_notify is not sent basic.cancel', async () => {
    const c = await RawClient.signedIn(server().port);
    c.send(1, 'queue.declare', { queue: 'deleted-quietly' });
    await c.expect('queue.declare-ok');
    c.send(1, 'basic.consume', { queue: 'deleted-quietly', noAck: true });
    await c.expect('basic.consume-ok');
    await deleteOverSqs('deleted-quietly');
    assert.equal((await c.answer(1000)).kind, 'timeout');
    c.close();
  });
});

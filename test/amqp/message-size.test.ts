/**
 * The largest AMQP message is RabbitMQ 4's default max_message_size, 16 MiB, or what
 * --amqp-max-message-size says: a 15 MiB publish is stored and delivered whole (as on
 * RabbitMQ), one byte over the limit closes the channel with 406, and an SQS client
 * receives such a message whole, though it is larger than SQS's own 1 MiB.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import amqp from 'amqplib';
import { sameOnBoth } from './both-brokers.js';
import { startAmqpServer, useAmqpServer } from './support.js';

const MiB = 1024 * 1024;
const digest = (b: Buffer | string) => createHash('sha256').update(b).digest('hex').slice(0, 16);

/** A confirmed publish of `size` bytes and the message read back: [confirm, digest of what came back]. */
async function publishAndGet(url: string, queue: string, size: number) {
  const conn = await amqp.connect(url);
  const ch = await conn.createConfirmChannel();
  await ch.assertQueue(queue);
  const body = Buffer.alloc(size, 'abcdefgh');
  const confirm = await new Promise<string>((resolve) =>
    ch.sendToQueue(queue, body, {}, (err) => resolve(err ? 'nack' : 'ack')),
  );
  const m = await ch.get(queue, { noAck: true });
  await ch.deleteQueue(queue);
  await conn.close();
  return [confirm, m ? digest(m.content) === digest(body) : 'nothing'];
}

/** The channel error a publish of `size` bytes gets. */
async function refused(url: string, size: number): Promise<string> {
  const conn = await amqp.connect(url);
  const ch = await conn.createChannel();
  const closed = new Promise<string>((resolve) => ch.on('error', (e: Error) => resolve(e.message)));
  ch.sendToQueue('size-refused', Buffer.alloc(size));
  const message = await closed;
  await conn.close();
  return message;
}

describe('AMQP message size', () => {
  const server = useAmqpServer();

  test('a 15 MiB publish is stored and read back whole, as on RabbitMQ', async (t) => {
    assert.deepEqual(await publishAndGet(server().url, 'size-15mib', 15 * MiB), ['ack', true]);
    await sameOnBoth(t, server().url, (url, prefix) => publishAndGet(url, `${prefix}size-15mib`, 15 * MiB));
  });

  test("one byte over 16 MiB closes the channel with 406, RabbitMQ 4's text", async () => {
    assert.equal(
      await refused(server().url, 16 * MiB + 1),
      'Channel closed by server: 406 (PRECONDITION-FAILED) with message "PRECONDITION_FAILED - message size 16777217 is larger than configured max size 16777216"',
    );
  });

  test('an SQS client receives a 15 MiB AMQP message whole', async () => {
    const conn = await amqp.connect(server().url);
    const ch = await conn.createConfirmChannel();
    await ch.assertQueue('size-over-sqs');
    const text = 'x'.repeat(15 * MiB);
    ch.sendToQueue('size-over-sqs', Buffer.from(text));
    await ch.waitForConfirms();
    await conn.close();
    const { Messages } = await server()
      .server.client()
      .send(new ReceiveMessageCommand({ QueueUrl: `${server().server.url}/000000000000/size-over-sqs` }));
    assert.equal(Messages?.length, 1);
    assert.equal(digest(Messages![0]!.Body!), digest(text));
  });

  test('--amqp-max-message-size sets the limit', async () => {
    const small = await startAmqpServer({ args: ['--amqp-max-message-size', '2048'] });
    try {
      assert.match(await refused(small.url, 2049), /406.*message size 2049 is larger than configured max size 2048/);
    } finally {
      await small.server.stop();
      small.server.cleanup();
    }
  });
});

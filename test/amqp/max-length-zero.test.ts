/**
 * A queue with `x-max-length: 0` (or `x-max-length-bytes: 0`) and `reject-publish` holds
 * nothing: every publish is nacked, as in RabbitMQ; an SQS send to it is refused.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import amqp from 'amqplib';
import { sameOnBoth } from './both-brokers.js';
import { useAmqpServer } from './support.js';

/** Confirms of three publishes to a queue declared with `args`, and its depth after. */
async function publishThree(url: string, queue: string, args: Record<string, unknown>) {
  const conn = await amqp.connect(url);
  const ch = await conn.createConfirmChannel();
  await ch.assertQueue(queue, { arguments: args });
  const confirms = await Promise.all(
    ['a', 'b', 'c'].map(
      (b) =>
        new Promise<string>((resolve) =>
          ch.sendToQueue(queue, Buffer.from(b), {}, (err) => resolve(err ? 'nack' : 'ack')),
        ),
    ),
  );
  const { messageCount } = await ch.checkQueue(queue);
  await ch.deleteQueue(queue);
  await conn.close();
  return { confirms, messageCount };
}

describe('x-max-length 0 with reject-publish', () => {
  const server = useAmqpServer();

  for (const args of [
    { 'x-max-length': 0, 'x-overflow': 'reject-publish' },
    { 'x-max-length-bytes': 0, 'x-overflow': 'reject-publish' },
  ]) {
    test(`${JSON.stringify(args)}: every publish is nacked, as on RabbitMQ`, async (t) => {
      const got = await publishThree(server().url, 'zero-length', args);
      assert.deepEqual(got, { confirms: ['nack', 'nack', 'nack'], messageCount: 0 });
      await sameOnBoth(t, server().url, (url, prefix) => publishThree(url, `${prefix}zero-length`, args));
    });
  }

  test('an SQS send to such a queue is refused with OverLimit', async () => {
    const conn = await amqp.connect(server().url);
    const ch = await conn.createChannel();
    await ch.assertQueue('zero-length-sqs', { arguments: { 'x-max-length': 0, 'x-overflow': 'reject-publish' } });
    await conn.close();
    const sqs = server().server.client();
    await assert.rejects(
      sqs.send(
        new SendMessageCommand({ QueueUrl: `${server().server.url}/000000000000/zero-length-sqs`, MessageBody: 'x' }),
      ),
      (e: Error) => e.name === 'OverLimit',
    );
  });
});

/**
 * The empty queue name stands for the channel's most recently declared queue in
 * basic.consume, basic.get, queue.bind, queue.unbind, queue.purge and queue.delete, and
 * is 404 "no previously declared queue" on a channel that declared none: as in RabbitMQ.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import amqp from 'amqplib';
import { replyCode, sameOnBoth } from './both-brokers.js';
import { useAmqpServer } from './support.js';

/** Each method with "" on a fresh channel: the error it gets. */
async function withoutDeclaration(url: string) {
  const conn = await amqp.connect(url);
  const out: Record<string, unknown> = {};
  const attempts: [string, (ch: amqp.Channel) => Promise<unknown>][] = [
    ['consume', (ch) => ch.consume('', () => undefined)],
    ['get', (ch) => ch.get('')],
    ['bind', (ch) => ch.bindQueue('', 'amq.direct', 'k')],
    ['unbind', (ch) => ch.unbindQueue('', 'amq.direct', 'k')],
    ['purge', (ch) => ch.purgeQueue('')],
    ['delete', (ch) => ch.deleteQueue('')],
  ];
  for (const [name, attempt] of attempts) {
    const ch = await conn.createChannel();
    ch.on('error', () => undefined);
    const message = await attempt(ch).then(
      () => 'ok',
      (e: Error) => e.message.replace(/^Operation failed: \w+; /, ''),
    );
    out[name] = message;
  }
  await conn.close();
  return out;
}

/** Every shortcut after declaring `queue`: what each answers. */
async function afterDeclaration(url: string, queue: string) {
  const conn = await amqp.connect(url);
  const ch = await conn.createChannel();
  const declared = await ch.assertQueue(queue);
  // With the routing key empty too, the binding's key is the queue's name.
  await ch.bindQueue('', 'amq.direct', '');
  ch.publish('amq.direct', queue, Buffer.from('routed by the queue name'));
  const depth = (await ch.checkQueue(queue)).messageCount;
  const got = await ch.get('');
  const gotBody = got ? got.content.toString() : null;
  if (got) ch.ack(got);
  ch.sendToQueue(queue, Buffer.from('to purge'));
  await ch.checkQueue(queue);
  const purged = await ch.purgeQueue('');
  const { consumerTag } = await ch.consume('', () => undefined);
  const consumers = (await ch.checkQueue(queue)).consumerCount;
  await ch.cancel(consumerTag);
  await ch.unbindQueue('', 'amq.direct', '');
  const deleted = await ch.deleteQueue('');
  const gone = await replyCode(
    conn.createChannel().then(async (c) => {
      c.on('error', () => undefined);
      await c.checkQueue(queue);
    }),
  );
  await conn.close();
  return { declared: declared.queue === queue, depth, gotBody, purged, consumers, deleted, gone };
}

describe('the empty queue name', () => {
  const server = useAmqpServer();

  test('with no queue declared on the channel: 404 no previously declared queue, as on RabbitMQ', async (t) => {
    const got = await withoutDeclaration(server().url);
    assert.equal(got.get, '404 (NOT-FOUND) with message "NOT_FOUND - no previously declared queue"');
    await sameOnBoth(t, server().url, (url) => withoutDeclaration(url));
  });

  test('after a declaration: consume, get, bind, unbind, purge and delete use that queue, as on RabbitMQ', async (t) => {
    const got = await afterDeclaration(server().url, 'last-declared');
    assert.deepEqual(got, {
      declared: true,
      depth: 1,
      gotBody: 'routed by the queue name',
      purged: { messageCount: 1 },
      consumers: 1,
      deleted: { messageCount: 0 },
      gone: 404,
    });
    await sameOnBoth(t, server().url, (url, prefix) => afterDeclaration(url, `${prefix}last-declared`));
  });
});

/**
 * Direct reply-to (`amq.rabbitmq.reply-to`), as RabbitMQ does it: a requester consumes
 * the pseudo-queue in no-ack mode, its requests' reply-to is rewritten to an opaque
 * address, and replies published to that address on the default exchange go straight to
 * its channel; the errors of a requester without a reply consumer, an acking reply
 * consumer and a second one; a reply to an unknown address is returned if mandatory.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import amqp, { type Channel, type ConsumeMessage } from 'amqplib';
import { sameOnBoth } from './both-brokers.js';
import { pause, useAmqpServer } from './support.js';

const REPLY_QUEUE = 'amq.rabbitmq.reply-to';

/** The channel error an operation on a fresh channel ends with. */
async function channelError(conn: amqp.ChannelModel, op: (ch: Channel) => unknown) {
  const ch = await conn.createChannel();
  const closed = new Promise<string>((resolve) => ch.on('error', (e: Error) => resolve(e.message)));
  await Promise.resolve(op(ch)).catch(() => undefined);
  return Promise.race([closed, pause(2000).then(() => 'no error')]);
}

async function rpc(url: string, queue: string) {
  const conn = await amqp.connect(url);
  conn.on('error', () => undefined);
  const server = await conn.createChannel();
  await server.assertQueue(queue);
  await server.purgeQueue(queue);
  const seenByServer: unknown[] = [];
  await server.consume(queue, (m) => {
    if (!m) return;
    const replyTo = String(m.properties.replyTo);
    seenByServer.push([replyTo.startsWith(`${REPLY_QUEUE}.`), replyTo.length > REPLY_QUEUE.length + 8]);
    server.sendToQueue(replyTo, Buffer.from(`re: ${m.content.toString()}`), {
      correlationId: m.properties.correlationId,
    });
    server.ack(m);
  });

  const client = await conn.createChannel();
  const replies: unknown[] = [];
  const got = new Promise<void>((resolve) => {
    void client.consume(
      REPLY_QUEUE,
      (m: ConsumeMessage | null) => {
        if (!m) return;
        replies.push([
          m.content.toString(),
          m.properties.correlationId,
          m.fields.exchange,
          m.fields.routingKey.startsWith(`${REPLY_QUEUE}.`),
          m.fields.redelivered,
        ]);
        if (replies.length === 2) resolve();
      },
      { noAck: true },
    );
  });
  const declared = await client.checkQueue(REPLY_QUEUE);
  for (const id of ['1', '2'])
    client.sendToQueue(queue, Buffer.from(`request ${id}`), { replyTo: REPLY_QUEUE, correlationId: id });
  await Promise.race([got, pause(3000)]);

  const returned = await new Promise<unknown>((resolve) => {
    client.once('return', (m: { fields: { replyCode: number; routingKey: string } }) =>
      resolve([m.fields.replyCode, m.fields.routingKey]),
    );
    client.publish('', `${REPLY_QUEUE}.not-a-requester`, Buffer.from('lost'), { mandatory: true });
    void pause(2000).then(() => resolve('not returned'));
  });

  const errors = {
    noConsumer: await channelError(conn, (ch) => ch.sendToQueue(queue, Buffer.from('x'), { replyTo: REPLY_QUEUE })),
    acking: await channelError(conn, (ch) => ch.consume(REPLY_QUEUE, () => undefined, { noAck: false })),
    twice: await channelError(conn, async (ch) => {
      await ch.consume(REPLY_QUEUE, () => undefined, { noAck: true });
      await ch.consume(REPLY_QUEUE, () => undefined, { noAck: true });
    }),
  };
  await server.deleteQueue(queue);
  await conn.close();
  return {
    seenByServer,
    replies: replies.sort(),
    declared: [declared.messageCount, declared.consumerCount],
    returned,
    errors,
  };
}

describe('direct reply-to', () => {
  const server = useAmqpServer();

  test('requests and replies, the errors, a reply to no requester: as on RabbitMQ', async (t) => {
    const got = await rpc(server().url, 'rpc-server');
    assert.deepEqual(got.replies, [
      ['re: request 1', '1', '', true, false],
      ['re: request 2', '2', '', true, false],
    ]);
    assert.deepEqual(got.errors, {
      noConsumer:
        'Channel closed by server: 406 (PRECONDITION-FAILED) with message "PRECONDITION_FAILED - fast reply consumer does not exist"',
      acking:
        'Channel closed by server: 406 (PRECONDITION-FAILED) with message "PRECONDITION_FAILED - reply consumer cannot acknowledge"',
      twice:
        'Channel closed by server: 406 (PRECONDITION-FAILED) with message "PRECONDITION_FAILED - reply consumer already set"',
    });
    await sameOnBoth(t, server().url, (url, prefix) => rpc(url, `${prefix}rpc-server`));
  });

  test('another connection replies; after the requester cancels, its address takes nothing', async () => {
    const a = await amqp.connect(server().url);
    const b = await amqp.connect(server().url);
    const requester = await a.createChannel();
    const replies: string[] = [];
    const { consumerTag } = await requester.consume(REPLY_QUEUE, (m) => m && replies.push(m.content.toString()), {
      noAck: true,
    });
    await requester.assertQueue('rpc-cross');
    requester.sendToQueue('rpc-cross', Buffer.from('q'), { replyTo: REPLY_QUEUE });
    const replier = await b.createChannel();
    let req: false | { properties: { replyTo?: string } } = false;
    for (let i = 0; i < 50 && !req; i++) {
      req = await replier.get('rpc-cross', { noAck: true });
      if (!req) await pause(20);
    }
    assert.ok(req);
    const address = String(req.properties.replyTo);
    replier.sendToQueue(address, Buffer.from('answer'));
    for (let i = 0; i < 50 && !replies.length; i++) await pause(20);
    assert.deepEqual(replies, ['answer']);
    await requester.cancel(consumerTag);
    const returned = new Promise<number>((resolve) => replier.once('return', (m) => resolve(m.fields.replyCode)));
    replier.publish('', address, Buffer.from('too late'), { mandatory: true });
    assert.equal(await returned, 312);
    assert.deepEqual(replies, ['answer']);
    await requester.deleteQueue('rpc-cross');
    await a.close();
    await b.close();
  });
});

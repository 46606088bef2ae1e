/**
 * Every unacknowledged delivery goes back to its queue when its channel or connection
 * closes, whatever the order of reject/nack with requeue, basic.cancel and the close: the
 * pattern of a consumer stopping itself from its own callback. Checked with amqplib on
 * RabbitMQ and Redrive, and with pika on Redrive.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';
import amqp, { type Channel, type ChannelModel, type ConsumeMessage } from 'amqplib';
import { needs } from '../support/requirements.js';
import { sameOnBoth } from './both-brokers.js';
import { pause, useAmqpServer } from './support.js';

type Ending = 'channel.close' | 'connection.close' | 'socket destroyed' | 'none';
type Order = 'reject, cancel' | 'nack, cancel' | 'cancel, reject';

const ROUNDS = 8;

/** The first delivery, settled and cancelled from the consumer's callback in `order`. */
async function stopFromCallback(ch: Channel, queue: string, order: Order): Promise<void> {
  let tag = '';
  const seen = new Promise<void>((resolve) => {
    void ch
      .consume(queue, (m: ConsumeMessage | null) => {
        if (!m) return;
        if (order === 'cancel, reject') {
          void ch.cancel(tag).catch(() => undefined);
          ch.reject(m, true);
        } else {
          if (order === 'reject, cancel') ch.reject(m, true);
          else ch.nack(m, false, true);
          void ch.cancel(tag).catch(() => undefined);
        }
        resolve();
      })
      .then((ok) => (tag = ok.consumerTag));
  });
  await seen;
}

async function end(conn: ChannelModel, ch: Channel, ending: Ending): Promise<void> {
  if (ending === 'channel.close') await ch.close();
  if (ending === 'connection.close') await conn.close();
  if (ending === 'socket destroyed')
    (conn as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
}

/** Per round: the body a fresh connection's basic.get finds after the consumer stopped and `ending`. */
async function rounds(url: string, queue: string, order: Order, ending: Ending): Promise<(string | null)[]> {
  const out: (string | null)[] = [];
  const admin = await amqp.connect(url);
  const ach = await admin.createChannel();
  await ach.assertQueue(queue, { durable: false });
  await ach.purgeQueue(queue);
  for (let r = 0; r < ROUNDS; r++) {
    ach.sendToQueue(queue, Buffer.from(`m${r}`));
    const conn = await amqp.connect(url);
    conn.on('error', () => undefined);
    const ch = await conn.createChannel();
    // Without a prefetch the consumer is already waiting for more when the reject requeues.
    await stopFromCallback(ch, queue, order);
    // Let the reject and cancel reach the broker before the close, as a callback's would.
    await pause(20);
    await end(conn, ch, ending);
    let m: false | { content: Buffer } = false;
    for (let i = 0; i < 50 && !m; i++) {
      m = await ach.get(queue, { noAck: true });
      if (!m) await pause(20);
    }
    out.push(m ? m.content.toString() : null);
    if (ending === 'none' || ending === 'channel.close') await conn.close();
  }
  await ach.deleteQueue(queue);
  await admin.close();
  return out;
}

describe('unacknowledged deliveries return when their channel or connection closes', () => {
  const server = useAmqpServer();
  const expected = Array.from({ length: ROUNDS }, (_, r) => `m${r}`);

  for (const [order, ending] of [
    ['reject, cancel', 'channel.close'],
    ['nack, cancel', 'connection.close'],
    ['cancel, reject', 'socket destroyed'],
    ['reject, cancel', 'none'],
  ] as [Order, Ending][]) {
    test(`amqplib: ${order} from the callback, then ${ending}: a new connection gets the message`, async (t) => {
      const got = await rounds(server().url, `requeue-${order.replace(/\W+/g, '-')}`, order, ending);
      assert.deepEqual(got, expected);
      await sameOnBoth(t, server().url, (url, prefix) =>
        rounds(url, `${prefix}requeue-${order.replace(/\W+/g, '-')}`, order, ending),
      );
    });
  }

  test(
    'pika: nack with requeue and cancel from the callback, then close: the message is back',
    needs('pika'),
    async () => {
      const script = fileURLToPath(new URL('../../../test/amqp/pika_requeue_cancel.py', import.meta.url));
      const python = process.env.REDRIVE_TEST_PYTHON ?? '/usr/bin/python3';
      const { stdout } = await promisify(execFile)(python, [script, server().url, 'requeue-pika', String(ROUNDS)], {
        timeout: 30_000,
      });
      assert.deepEqual(JSON.parse(stdout), expected);
    },
  );
});

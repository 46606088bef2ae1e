/**
 * basic.qos with global=true, per queue type, as RabbitMQ 3.10 does it: on a classic
 * queue the prefetch is shared by the channel's consumers; a consumer of a quorum queue
 * on a channel with a global prefetch is refused with 540 NOT_IMPLEMENTED (which closes
 * the connection). Celery sends global QoS: it must use classic queues, as on RabbitMQ.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';
import amqp from 'amqplib';
import { needs } from '../support/requirements.js';
import { sameOnBoth } from './both-brokers.js';
import { pause, useAmqpServer } from './support.js';

/** Two consumers on one channel with a global prefetch of 2, and five messages: how many each got. */
async function classicShared(url: string, queue: string) {
  const conn = await amqp.connect(url);
  const ch = await conn.createChannel();
  await ch.assertQueue(queue);
  await ch.purgeQueue(queue);
  for (let i = 0; i < 5; i++) ch.sendToQueue(queue, Buffer.from(`m${i}`));
  await ch.checkQueue(queue);
  await ch.prefetch(2, true);
  let delivered = 0;
  await ch.consume(queue, () => delivered++);
  await ch.consume(queue, () => delivered++);
  await pause(400);
  const held = delivered;
  await ch.deleteQueue(queue);
  await conn.close();
  return { held };
}

/** A quorum queue consumed after basic.qos(global): the error the connection closes with. */
async function quorumRefused(url: string, queue: string) {
  const conn = await amqp.connect(url);
  const closed = new Promise<string>((resolve) => conn.on('error', (e: Error) => resolve(e.message)));
  const ch = await conn.createChannel();
  ch.on('error', () => undefined);
  await ch.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
  await ch.prefetch(5, true);
  await ch.consume(queue, () => undefined).catch(() => undefined);
  const error = await closed;
  const admin = await amqp.connect(url);
  const ach = await admin.createChannel();
  // basic.get takes no prefetch: it works on a channel with a global one.
  await ach.prefetch(5, true);
  const get = await ach.get(queue);
  await ach.deleteQueue(queue);
  await admin.close();
  return { error, get };
}

describe('basic.qos with global=true', () => {
  const server = useAmqpServer();

  test('classic queue: the prefetch is shared by the channel consumers, as on RabbitMQ', async (t) => {
    assert.deepEqual(await classicShared(server().url, 'global-qos-classic'), { held: 2 });
    await sameOnBoth(t, server().url, (url, prefix) => classicShared(url, `${prefix}global-qos-classic`));
  });

  test('quorum queue: basic.consume is refused with 540 NOT_IMPLEMENTED, as on RabbitMQ', async (t) => {
    const got = await quorumRefused(server().url, 'global-qos-quorum');
    assert.match(
      got.error,
      /540 \(NOT-IMPLEMENTED\).*queue 'global-qos-quorum' in vhost '\/' does not support global qos/,
    );
    await sameOnBoth(t, server().url, async (url, prefix) => {
      const r = await quorumRefused(url, `${prefix}global-qos-quorum`);
      return { ...r, error: r.error.replace(prefix, '') };
    });
  });

  test('pika: the same refusal for a quorum queue under global QoS (what Celery sends)', needs('pika'), async () => {
    const script = `
import sys, pika
c = pika.BlockingConnection(pika.URLParameters(sys.argv[1]))
ch = c.channel()
ch.queue_declare("global-qos-pika", durable=True, arguments={"x-queue-type": "quorum"})
ch.basic_qos(prefetch_count=4, global_qos=True)
try:
    ch.basic_consume("global-qos-pika", lambda *a: None)
    c.process_data_events(time_limit=0.5)
    print("consumed")
except pika.exceptions.ConnectionClosedByBroker as e:
    print(e.reply_code, e.reply_text)
`;
    const python = process.env.REDRIVE_TEST_PYTHON ?? '/usr/bin/python3';
    const { stdout } = await promisify(execFile)(python, ['-c', script, server().url], { timeout: 30_000 });
    assert.equal(
      stdout.trim(),
      "540 NOT_IMPLEMENTED - queue 'global-qos-pika' in vhost '/' does not support global qos",
    );
  });
});

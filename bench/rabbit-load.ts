import amqp, { type ConfirmChannel } from 'amqplib';
import { performance } from 'node:perf_hooks';
import type { LoadSpec } from './protocol.js';
import { stampedBody, stampOf, type Window } from './window.js';

/**
 * AMQP load, against RabbitMQ (the baseline) or Redrive's AMQP listener, held to Redrive's
 * promise: a durable queue (classic, or quorum with spec.queueType), persistent
 * messages, and a publish counts only once the broker confirmed it. Each publisher
 * has its own confirm channel with one publish outstanding, the AMQP analogue of one
 * HTTP connection with one request in flight.
 */
function publish(ch: ConfirmChannel, queue: string, body: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    ch.sendToQueue(queue, body, { persistent: true }, (err) => (err ? reject(err) : resolve()));
  });
}

export async function runRabbit(spec: LoadSpec, w: Window): Promise<void> {
  // amqplib leaves Nagle on by default; Node's HTTP server and undici turn it off, so do the same.
  const conn = await amqp.connect(spec.target, { noDelay: true });
  try {
    const admin = await conn.createChannel();
    await admin.assertQueue(spec.queue, {
      durable: true,
      arguments: spec.queueType === 'quorum' ? { 'x-queue-type': 'quorum' } : {},
    });
    const publishers = await Promise.all(Array.from({ length: spec.producers }, () => conn.createConfirmChannel()));
    const consumed = spec.kind === 'rabbit-cycle' ? consume(conn, spec, w) : Promise.resolve();
    await Promise.all(
      publishers.map(async (ch) => {
        while (w.running) {
          try {
            await publish(ch, spec.queue, Buffer.from(stampedBody(spec.bodyBytes)));
            w.count(1);
          } catch (e) {
            w.error(e);
            return;
          }
        }
      }),
    );
    await consumed;
    // Leave nothing behind on the shared broker.
    await admin.deleteQueue(spec.queue);
  } finally {
    await conn.close().catch(() => {});
  }
}

/** Consumers with manual acks and a prefetch of ten, like W3's receives of up to ten. */
async function consume(conn: amqp.ChannelModel, spec: LoadSpec, w: Window): Promise<void> {
  const channels = await Promise.all(
    Array.from({ length: spec.consumers }, async () => {
      const ch = await conn.createChannel();
      await ch.prefetch(10);
      const { consumerTag } = await ch.consume(
        spec.queue,
        (msg) => {
          if (!msg) return;
          w.latency(performance.now() - stampOf(msg.content.toString('latin1')));
          ch.ack(msg);
          w.count(0, 1);
        },
        { noAck: false },
      );
      return { ch, consumerTag };
    }),
  );
  await w.closed;
  await Promise.all(channels.map(({ ch, consumerTag }) => ch.cancel(consumerTag)));
}

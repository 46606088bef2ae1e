import { publishFrames, RawClient } from '../test/amqp/raw-client.js';

/**
 * Confirm frames per confirmed publish (docs/performance.md, "AMQP"): N persistent 256-byte
 * publishes written at once on one confirm channel, and the basic.ack/nack frames counted
 * until the last is covered. A broker that acknowledges runs (multiple=true) sends far
 * fewer frames than messages.
 *   node dist/bench/amqp-confirm-frames.js PORT [N=10000]   (guest/guest; against Redrive's --amqp-port or RabbitMQ)
 */
const port = Number(process.argv[2]);
const n = Number(process.argv[3] ?? 10_000);

const c = await RawClient.signedIn(port);
const queue = `confirm-frames-${Date.now()}`;
c.send(1, 'queue.declare', { queue, durable: true, arguments: new Map() });
await c.expect('queue.declare-ok');
c.send(1, 'confirm.select');
await c.expect('confirm.select-ok');
const body = 'x'.repeat(256);
for (let i = 0; i < n; i += 500)
  c.write(Buffer.concat(Array.from({ length: Math.min(500, n - i) }, () => publishFrames(1, queue, body))));
let frames = 0;
for (let last = 0; last < n; ) {
  const a = await c.answer(20_000);
  if (a.kind !== 'basic.ack' && a.kind !== 'basic.nack') throw new Error(`expected a confirm, got ${a.kind}`);
  frames++;
  last = Number(a.args!.deliveryTag);
}
console.log(
  JSON.stringify({ port, publishes: n, confirmFrames: frames, framesPerConfirmedPublish: +(frames / n).toFixed(4) }),
);
c.send(1, 'queue.delete', { queue });
c.close();

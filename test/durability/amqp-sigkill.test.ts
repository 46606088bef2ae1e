/**
 * AMQP durability: publishers with confirms and consumers rejecting into a dead-letter
 * exchange (fanout to two queues) under load, SIGKILL mid-load, restart on the same data
 * directory. Every confirmed publish is still there, exactly once: in its queue, or, if
 * it was dead-lettered, in both dead-letter queues and no longer in its queue (the move
 * is one transaction). Deliveries the consumers held unacknowledged are ready again as
 * soon as the server is back, flagged redelivered, each once (docs/amqp.md, redelivery).
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import amqp, { type ConfirmChannel } from 'amqplib';
import { startAmqpServer, type AmqpServer } from '../amqp/support.js';

const servers: AmqpServer[] = [];
after(async () => {
  for (const s of servers) if (s.server.proc.exitCode === null) await s.server.kill();
  servers[0]?.server.cleanup();
});

/**
 * Every body in the queue, each listed as often as it is there: consumed without acks
 * (each receive is one commit, where a get and its ack would be two per message).
 */
async function bodies(ch: ConfirmChannel, queue: string, redelivered?: Set<string>): Promise<string[]> {
  const out: string[] = [];
  let last = Date.now();
  const { consumerTag } = await ch.consume(
    queue,
    (m) => {
      if (!m) return;
      out.push(m.content.toString());
      if (m.fields.redelivered) redelivered?.add(m.content.toString());
      last = Date.now();
    },
    { noAck: true },
  );
  while (Date.now() - last < 1000) await new Promise((r) => setTimeout(r, 100));
  await ch.cancel(consumerTag);
  return out;
}

test('every confirmed AMQP publish survives SIGKILL, and dead-lettering neither loses nor duplicates', async () => {
  const first = await startAmqpServer({ storage: 'sqlite' });
  servers.push(first);
  const conn = await amqp.connect(first.url);
  conn.on('error', () => undefined);
  const setup = await conn.createConfirmChannel();
  await setup.assertExchange('kill-dlx', 'fanout');
  await setup.assertQueue('kill-src', { arguments: { 'x-dead-letter-exchange': 'kill-dlx' } });
  for (const q of ['kill-dlq-a', 'kill-dlq-b']) {
    await setup.assertQueue(q);
    await setup.bindQueue(q, 'kill-dlx', '');
  }
  const confirmed = new Set<string>();
  let stop = false;
  const publisher = async (w: number) => {
    const ch = await conn.createConfirmChannel();
    ch.on('error', () => undefined);
    for (let n = 0; !stop; n++) {
      const ids = Array.from({ length: 20 }, (_, k) => `${w}-${n}-${k}`);
      const acks = ids.map(
        (id) =>
          new Promise<boolean>((resolve) =>
            ch.publish('', 'kill-src', Buffer.from(id), { persistent: true }, (err) => resolve(!err)),
          ),
      );
      try {
        const ok = await Promise.all(acks);
        ids.forEach((id, k) => ok[k] && confirmed.add(id));
      } catch {
        return;
      }
      if (ch.connection === undefined) return;
    }
  };
  // Consumers reject about half of what they get, so dead-lettering runs during the kill,
  // and hold the rest unacknowledged.
  const held = new Set<string>();
  const consumer = async () => {
    const ch = await conn.createChannel();
    ch.on('error', () => undefined);
    await ch.prefetch(50);
    await ch.consume('kill-src', (m) => {
      if (!m) return;
      if (Number(m.content.toString().split('-')[2]) % 2 === 0) ch.reject(m, false);
      else held.add(m.content.toString());
    });
  };
  await Promise.all([consumer(), consumer()]);
  const publishers = Array.from({ length: 4 }, (_, w) => publisher(w));
  while (confirmed.size < 1500) {
    await new Promise((r) => setTimeout(r, 5));
  }
  await first.server.kill();
  stop = true;
  await Promise.race([Promise.all(publishers), new Promise((r) => setTimeout(r, 2000))]);

  // The messages the consumers held unacknowledged are ready as soon as the server is
  // back: its clock does not move, so no visibility timeout can have passed.
  const second = await startAmqpServer({ storage: 'sqlite', dataDir: first.server.dataDir, manualClock: true });
  servers.push(second);
  const conn2 = await amqp.connect(second.url);
  const ch = await conn2.createConfirmChannel();
  const redelivered = new Set<string>();
  const src = await bodies(ch, 'kill-src', redelivered);
  const notBack = [...held].filter((id) => !redelivered.has(id));
  assert.deepEqual(
    notBack,
    [],
    `${notBack.length} of ${held.size} held deliveries not ready again, redelivered, right after restart`,
  );
  assert.ok(held.size > 0, 'the consumers held deliveries at the kill');
  assert.match(second.server.output(), /returned unacknowledged AMQP deliveries of a stopped process to their queues/);
  const a = await bodies(ch, 'kill-dlq-a');
  const b = await bodies(ch, 'kill-dlq-b');
  for (const [name, list] of [
    ['kill-src', src],
    ['kill-dlq-a', a],
    ['kill-dlq-b', b],
  ] as const) {
    assert.equal(new Set(list).size, list.length, `no message twice in ${name}`);
  }
  const inSrc = new Set(src);
  const inA = new Set(a);
  const inB = new Set(b);
  const lost = [...confirmed].filter((id) => !inSrc.has(id) && !inA.has(id));
  assert.deepEqual(lost, [], `${lost.length} of ${confirmed.size} confirmed messages lost`);
  const both = [...inSrc].filter((id) => inA.has(id) || inB.has(id));
  assert.deepEqual(both, [], 'a dead-lettered message left its queue in the same step');
  assert.deepEqual([...inA].sort(), [...inB].sort(), 'each dead letter reached both queues of the fanout');
  assert.ok(a.length > 0, 'dead-lettering was under way');
  await conn2.close();
  await second.server.stop();
});

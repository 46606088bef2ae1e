/**
 * AMQP deliveries by node on a shared PostgreSQL store: when a node is killed, the
 * deliveries its consumers held unacknowledged go back to their queues (a running node
 * notices within seconds, a starting node at once), and only that node's: a live node's
 * consumers keep theirs.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import amqp, { type Channel, type ChannelModel } from 'amqplib';
import { startAmqpServer, type AmqpServer } from '../amqp/support.js';
import { createTestDatabase, type TestDatabase } from '../support/postgres.js';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
let db: TestDatabase | undefined;
const nodes: AmqpServer[] = [];
const conns: ChannelModel[] = [];
after(async () => {
  for (const c of conns) await c.close().catch(() => undefined);
  for (const n of nodes)
    if (n.server.proc.exitCode === null && n.server.proc.signalCode === null) await n.server.stop();
  nodes.forEach((n) => n.server.cleanup());
  await db?.drop();
});

async function connect(node: AmqpServer): Promise<Channel> {
  const conn = await amqp.connect(node.url);
  conn.on('error', () => undefined);
  conns.push(conn);
  const ch = await conn.createChannel();
  ch.on('error', () => undefined);
  return ch;
}

/** A consumer that holds up to 10 deliveries of `queue` without settling them; resolves once it holds 10. */
async function holdTen(ch: Channel, queue: string): Promise<string[]> {
  await ch.prefetch(10);
  const got: string[] = [];
  await ch.consume(queue, (m) => m && got.push(m.content.toString()));
  for (let i = 0; i < 100 && got.length < 10; i++) await pause(50);
  assert.equal(got.length, 10);
  return got;
}

/** ReleaseAmqpDeliveries (docs/extensions.md) on `node`. */
async function release(
  node: AmqpServer,
  input: Record<string, unknown> = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${node.server.url}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'AmazonSQS.ReleaseAmqpDeliveries' },
    body: JSON.stringify(input),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function ready(ch: Channel, queue: string): Promise<number> {
  return (await ch.checkQueue(queue)).messageCount;
}

test("a killed node's held AMQP deliveries return to their queues, a live node's stay held", {
  timeout: 90_000,
}, async () => {
  db = await createTestDatabase();
  const a = await startAmqpServer({ storage: db.url });
  nodes.push(a);
  const b = await startAmqpServer({ storage: db.url });
  nodes.push(b);
  const chA = await connect(a);
  const chB = await connect(b);
  for (const q of ['held-a', 'held-b']) {
    await chA.assertQueue(q);
    for (let i = 0; i < 20; i++) chA.sendToQueue(q, Buffer.from(`${q}-${i}`));
  }
  await pause(300);
  const heldByA = await holdTen(chA, 'held-a');
  const heldByB = await holdTen(chB, 'held-b');
  const probe = await connect(b);
  assert.equal(await ready(probe, 'held-a'), 10);
  assert.equal(await ready(probe, 'held-b'), 10);

  const holderA = (await release(a)).body.Self as string;
  const refused = await release(b, { Holder: holderA });
  assert.equal(refused.status, 400);
  assert.match(String(refused.body.message), /is a running process/);

  await a.server.kill();
  // B checks every 10 s for nodes that are gone.
  let back = 0;
  for (let i = 0; i < 200 && back < 20; i++) {
    back = await ready(probe, 'held-a');
    if (back < 20) await pause(100);
  }
  assert.equal(back, 20, "the killed node's 10 deliveries are ready again");
  assert.equal(await ready(probe, 'held-b'), 10, "the live node's deliveries stay held");
  for (let i = 0; i < 40 && !/returned unacknowledged AMQP deliveries/.test(b.server.output()); i++) await pause(50);
  assert.match(b.server.output(), /returned unacknowledged AMQP deliveries of a stopped process/);

  // B is killed after C started: an operator has C release B's deliveries at once.
  const c = await startAmqpServer({ storage: db.url });
  nodes.push(c);
  const chC = await connect(c);
  assert.equal(await ready(chC, 'held-b'), 10);
  await b.server.kill();
  const released = await release(c);
  assert.equal(released.status, 200, JSON.stringify(released.body));
  assert.equal(released.body.Released, 10);
  assert.equal(await ready(chC, 'held-b'), 20);
  const again: { body: string; redelivered: boolean }[] = [];
  for (let m = await chC.get('held-b', { noAck: true }); m; m = await chC.get('held-b', { noAck: true })) {
    again.push({ body: m.content.toString(), redelivered: m.fields.redelivered });
  }
  assert.equal(again.length, 20, 'each message once');
  assert.deepEqual(
    again
      .filter((x) => x.redelivered)
      .map((x) => x.body)
      .sort(),
    [...heldByB].sort(),
  );
  assert.equal(heldByA.length, 10);
});

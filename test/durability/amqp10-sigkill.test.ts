/**
 * AMQP 1.0 durability: messages sent by rhea and accepted survive SIGKILL, and the
 * deliveries a rhea receiver held unsettled are ready again as soon as the server is back
 * on the same data directory (delivery-count 1, first-acquirer false), each once; what
 * `released` and `modified` wrote into a message (its count of releases, merged
 * annotations) is there after the restart too.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { CreateQueueCommand } from '@aws-sdk/client-sqs';
import amqp from 'amqplib';
import { startAmqpServer, type AmqpServer } from '../amqp/support.js';
import { close, connect, receiver, send } from '../amqp10/support.js';

const servers: AmqpServer[] = [];
after(async () => {
  for (const s of servers) if (s.server.proc.exitCode === null) await s.server.kill();
  for (const s of servers) s.server.cleanup(); // each removes the data directory it made
});

test('accepted AMQP 1.0 sends survive SIGKILL; unsettled deliveries come back', { timeout: 120_000 }, async () => {
  const first = await startAmqpServer({ storage: 'sqlite' });
  servers.push(first);
  const c = await connect(first.port);
  c.on('disconnected', () => undefined);
  c.on('error', () => undefined);
  // AMQP 1.0 attaches to existing queues only: this one is made over SQS.
  await first.server.client().send(new CreateQueueCommand({ QueueName: 'k10' }));
  const bodies = Array.from({ length: 40 }, (_, i) => `m-${i}`);
  const outcomes = await send(
    c,
    '/queues/k10',
    bodies.map((body) => ({ body, durable: true })),
  );
  assert.ok(outcomes.every((o) => o.outcome === 'accepted'));
  const r = receiver(c, 'k10');
  r.link.add_credit(10);
  const held = await r.next(10);
  // Five settled (accepted), five held unsettled when the server dies.
  for (const h of held.slice(0, 5)) h.delivery.accept();
  await new Promise((resolve) => setTimeout(resolve, 300));
  await first.server.kill();
  await close(c).catch(() => undefined);

  const second = await startAmqpServer({ storage: 'sqlite', dataDir: first.server.dataDir });
  servers.push(second);
  const c2 = await connect(second.port);
  const r2 = receiver(c2, 'k10', { autoaccept: true });
  r2.link.add_credit(100);
  const all = await r2.next(35, 15_000);
  const seen = all.map((g) => g.message.body as string);
  const accepted = new Set(held.slice(0, 5).map((h) => h.message.body as string));
  assert.deepEqual(
    [...seen].sort(),
    bodies.filter((b) => !accepted.has(b)).sort(),
    'every accepted send is there once, the accepted deliveries are gone',
  );
  const unsettled = new Set(held.slice(5).map((h) => h.message.body as string));
  for (const g of all) {
    if (!unsettled.has(g.message.body as string)) continue;
    assert.equal(g.message.first_acquirer, false, 'a held delivery comes back as a redelivery');
    assert.equal(g.message.delivery_count, 1);
  }
  await close(c2);
  await second.server.stop();
});

test('a release counted and annotations merged before SIGKILL are kept', { timeout: 120_000 }, async () => {
  const first = await startAmqpServer({ storage: 'sqlite' });
  servers.push(first);
  const model = await amqp.connect(first.url);
  await (await model.createChannel()).assertQueue('k10-qq', { arguments: { 'x-queue-type': 'quorum' } });
  await model.close();
  const c = await connect(first.port);
  c.on('disconnected', () => undefined);
  c.on('error', () => undefined);
  await send(c, '/queues/k10-qq', [{ body: 'kept', durable: true }]);
  const r = receiver(c, 'k10-qq');
  const next = async (n: number) => {
    r.link.add_credit(1);
    return (await r.next(n))[n - 1]!;
  };
  (await next(1)).delivery.release();
  (await next(2)).delivery.modified({ delivery_failed: true, message_annotations: { 'x-opt-why': 'busy' } });
  await next(3); // held when the server dies
  await first.server.kill();
  await close(c).catch(() => undefined);

  const second = await startAmqpServer({ storage: 'sqlite', dataDir: first.server.dataDir });
  servers.push(second);
  const c2 = await connect(second.port);
  const r2 = receiver(c2, 'k10-qq', { autoaccept: true });
  r2.link.add_credit(1);
  const [back] = await r2.next(1, 15_000);
  assert.equal(back!.message.message_annotations?.['x-opt-why'], 'busy');
  // Four deliveries, one of them released: the failed one and the one the crash ended count.
  assert.equal(back!.message.delivery_count, 2);
  await close(c2);
  await second.server.stop();
});

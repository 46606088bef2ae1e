/**
 * x-expires on the engine's clock: QueueExpiry checks on the clock's schedule and the
 * registry dates every use by it, so a manual clock decides when an unused queue goes.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AmqpBroker } from '../../src/engine/amqp/broker.js';
import { QueueExpiry } from '../../src/protocols/amqp/queue-expiry.js';
import { AmqpRegistry } from '../../src/protocols/amqp/registry.js';
import { ctx, settle, testEngine } from '../engine/support.js';

const quiet = { info() {}, warn() {} };

test('an unused queue with x-expires is deleted when the manual clock passes its period; a consumer keeps one', async () => {
  const t = testEngine();
  const registry = new AmqpRegistry(t.engine.clock);
  const broker = new AmqpBroker(t.engine, ctx.accountId);
  const declare = async (name: string) => {
    const { queue } = await broker.declareQueue({
      name,
      passive: false,
      durable: true,
      exclusive: false,
      autoDelete: false,
      arguments: { 'x-expires': 1000 },
    });
    registry.armExpiry({ queueId: queue.id, accountId: ctx.accountId, name, expiresMs: 1000 });
    return queue;
  };
  const exists = async (name: string) => (await t.engine.store.queues.get(broker.address(name))) !== undefined;
  const idle = await declare('idle');
  const used = await declare('used');
  const consumer = { exclusive: false, queueDeleted() {} };
  registry.addConsumer(used.id, 'used', consumer);
  const expiry = new QueueExpiry(t.engine, registry, quiet);
  await expiry.start();
  const advance = async (ms: number) => {
    for (let left = ms; left > 0; left -= 250) {
      t.clock.advance(Math.min(250, left));
      await settle(20);
    }
  };
  try {
    await advance(750);
    assert.equal(await exists('idle'), true, 'not yet unused for its period');
    await advance(250);
    assert.equal(await exists('idle'), false, 'deleted once the clock reached its period');
    assert.equal(await exists('used'), true, 'a consumer keeps it');
    assert.equal(registry.consumerCount(idle.id), 0);
    registry.removeConsumer(used.id, consumer);
    await advance(750);
    assert.equal(await exists('used'), true, 'its period runs from when its last consumer left');
    await advance(250);
    assert.equal(await exists('used'), false);
  } finally {
    expiry.stop();
    await t.close();
  }
});

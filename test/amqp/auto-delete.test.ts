/**
 * Auto-delete, as RabbitMQ does it: an auto-delete exchange goes when its last binding
 * does (queue.unbind, exchange.unbind, the deletion of its bound queue, an exclusive
 * queue's with its connection), and never before it had one; an auto-delete queue goes
 * with its last consumer, also when the consumer's connection drops without a close.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import amqp, { type ChannelModel } from 'amqplib';
import { sameOnBoth } from './both-brokers.js';
import { pause, useAmqpServer } from './support.js';

/** Whether each exchange and queue exists, by passive declarations on fresh channels. */
async function exists(conn: ChannelModel, kind: 'exchange' | 'queue', name: string): Promise<boolean> {
  const ch = await conn.createChannel();
  ch.on('error', () => undefined);
  try {
    if (kind === 'exchange') await ch.checkExchange(name);
    else await ch.checkQueue(name);
    await ch.close();
    return true;
  } catch {
    return false;
  }
}

/** Waits for a deletion made by a connection's end, then says whether the thing is still there. */
async function eventually(conn: ChannelModel, kind: 'exchange' | 'queue', name: string): Promise<boolean> {
  for (let i = 0; i < 50; i++) {
    if (!(await exists(conn, kind, name))) return false;
    await pause(20);
  }
  return true;
}

async function scenario(url: string, p: string) {
  const admin = await amqp.connect(url);
  const ch = await admin.createChannel();
  const out: Record<string, boolean> = {};

  await ch.assertExchange(`${p}x-unbind`, 'direct', { autoDelete: true });
  await ch.assertQueue(`${p}q-plain`);
  out['never bound: stays'] = await exists(admin, 'exchange', `${p}x-unbind`);
  await ch.bindQueue(`${p}q-plain`, `${p}x-unbind`, 'a');
  await ch.bindQueue(`${p}q-plain`, `${p}x-unbind`, 'b');
  await ch.unbindQueue(`${p}q-plain`, `${p}x-unbind`, 'a');
  out['one of two bindings removed: stays'] = await exists(admin, 'exchange', `${p}x-unbind`);
  await ch.unbindQueue(`${p}q-plain`, `${p}x-unbind`, 'b');
  out['last queue binding removed: stays'] = await exists(admin, 'exchange', `${p}x-unbind`);

  await ch.assertExchange(`${p}x-e2e`, 'fanout', { autoDelete: true });
  await ch.assertExchange(`${p}x-dest`, 'fanout');
  await ch.bindExchange(`${p}x-dest`, `${p}x-e2e`, '');
  await ch.unbindExchange(`${p}x-dest`, `${p}x-e2e`, '');
  out['last exchange binding removed: stays'] = await exists(admin, 'exchange', `${p}x-e2e`);

  await ch.assertExchange(`${p}x-queue-deleted`, 'fanout', { autoDelete: true });
  await ch.assertQueue(`${p}q-deleted`);
  await ch.bindQueue(`${p}q-deleted`, `${p}x-queue-deleted`, '');
  await ch.deleteQueue(`${p}q-deleted`);
  out['bound queue deleted: stays'] = await exists(admin, 'exchange', `${p}x-queue-deleted`);

  const other = await amqp.connect(url);
  const och = await other.createChannel();
  await och.assertExchange(`${p}x-exclusive`, 'fanout', { autoDelete: true });
  await och.assertQueue(`${p}q-exclusive`, { exclusive: true });
  await och.bindQueue(`${p}q-exclusive`, `${p}x-exclusive`, '');
  await other.close();
  out['exclusive queue gone with its connection: stays'] = await eventually(admin, 'exchange', `${p}x-exclusive`);

  const dropped = await amqp.connect(url);
  dropped.on('error', () => undefined);
  const dch = await dropped.createChannel();
  await dch.assertQueue(`${p}q-auto`, { autoDelete: true });
  await dch.consume(`${p}q-auto`, () => undefined);
  (dropped as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
  out['auto-delete queue, consumer connection dropped: stays'] = await eventually(admin, 'queue', `${p}q-auto`);

  const closing = await amqp.connect(url);
  const cch = await closing.createChannel();
  await cch.assertQueue(`${p}q-auto-ch`, { autoDelete: true });
  await cch.consume(`${p}q-auto-ch`, () => undefined);
  await cch.close();
  out['auto-delete queue, consumer channel closed: stays'] = await eventually(admin, 'queue', `${p}q-auto-ch`);
  await closing.close();

  for (const q of ['q-plain']) await ch.deleteQueue(p + q);
  for (const x of ['x-unbind', 'x-e2e', 'x-dest', 'x-queue-deleted', 'x-exclusive'])
    await ch.deleteExchange(p + x).catch(() => undefined);
  await admin.close().catch(() => undefined);
  return out;
}

describe('auto-delete exchanges and queues', () => {
  const server = useAmqpServer();

  test('deleted with their last binding or consumer, as on RabbitMQ', async (t) => {
    assert.deepEqual(await scenario(server().url, 'ad-'), {
      'never bound: stays': true,
      'one of two bindings removed: stays': true,
      'last queue binding removed: stays': false,
      'last exchange binding removed: stays': false,
      'bound queue deleted: stays': false,
      'exclusive queue gone with its connection: stays': false,
      'auto-delete queue, consumer connection dropped: stays': false,
      'auto-delete queue, consumer channel closed: stays': false,
    });
    await sameOnBoth(t, server().url, scenario);
  });
});

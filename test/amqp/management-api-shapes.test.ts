/**
 * The management API's broker views against RabbitMQ's own (the management plugin on
 * 127.0.0.1:15672): the same topology on both (a named amqplib connection, prefetch, a
 * topic exchange, a queue with an argument, a binding with arguments, two deliveries
 * unacknowledged), then for each endpoint every field Redrive gives must exist in
 * RabbitMQ's object with the same JSON type, except Redrive's documented extensions, and
 * the fields tools rely on must be there on both sides.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test, type TestContext } from 'node:test';
import amqp, { type ChannelModel } from 'amqplib';
import { GUEST } from './policy-control.js';
import { pause, RABBIT_URL, rabbitOrSkip, startAmqpServer, type AmqpServer } from './support.js';
import { skipReason } from '../support/requirements.js';

const RABBIT_API = process.env.REDRIVE_TEST_RABBIT_MANAGEMENT ?? 'http://127.0.0.1:15672/api';

/** Redrive's fields that RabbitMQ does not have (docs/amqp.md#the-broker-at-a-glance). */
const EXTENSIONS: Record<string, string[]> = {
  consumer: ['messages_unacknowledged'],
  queue: ['messages_delayed', 'redrive', 'long_poll_receivers'],
};

/** The fields the brief and tools read: present on both sides, with the same type. */
const REQUIRED: Record<string, string[]> = {
  connection: [
    'name',
    'vhost',
    'user',
    'node',
    'state',
    'channels',
    'peer_host',
    'peer_port',
    'host',
    'port',
    'protocol',
    'client_properties',
    'connected_at',
    'recv_oct',
    'send_oct',
    'user_provided_name',
    'timeout',
    'frame_max',
  ],
  channel: [
    'name',
    'number',
    'vhost',
    'user',
    'node',
    'state',
    'prefetch_count',
    'global_prefetch_count',
    'messages_unacknowledged',
    'consumer_count',
    'confirm',
    'transactional',
    'connection_details',
  ],
  consumer: [
    'consumer_tag',
    'channel_details',
    'queue',
    'ack_required',
    'prefetch_count',
    'exclusive',
    'arguments',
    'active',
    'activity_status',
  ],
  exchange: ['name', 'vhost', 'type', 'durable', 'auto_delete', 'internal', 'arguments'],
  binding: ['source', 'vhost', 'destination', 'destination_type', 'routing_key', 'arguments', 'properties_key'],
  queue: [
    'name',
    'vhost',
    'durable',
    'auto_delete',
    'exclusive',
    'arguments',
    'messages',
    'messages_ready',
    'messages_unacknowledged',
    'consumers',
    'state',
    'type',
    'node',
    'consumer_details',
  ],
};

type Json = Record<string, any>;
const kind = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

/** Differences in field names and types between Redrive's object and RabbitMQ's, nested objects included. */
function differences(what: string, ours: Json, theirs: Json, path = ''): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(ours)) {
    if (!path && EXTENSIONS[what]?.includes(k)) continue;
    if (!(k in theirs)) out.push(`${what}: ${path}${k} is not in RabbitMQ's`);
    else if (kind(v) !== kind(theirs[k])) out.push(`${what}: ${path}${k} is ${kind(v)}, RabbitMQ's ${kind(theirs[k])}`);
    // Objects whose keys are data (arguments, client properties) are compared as values, not shapes.
    else if (kind(v) === 'object' && !['arguments', 'client_properties'].includes(k))
      out.push(...differences(what, v, theirs[k], `${path}${k}.`));
  }
  if (!path)
    for (const k of REQUIRED[what] ?? [])
      if (!(k in ours) || !(k in theirs))
        out.push(`${what}: ${k} missing (Redrive ${k in ours}, RabbitMQ ${k in theirs})`);
  return out;
}

async function rabbitApiOrSkip(t: TestContext): Promise<boolean> {
  try {
    const res = await fetch(`${RABBIT_API}/overview`, {
      headers: { authorization: GUEST },
      signal: AbortSignal.timeout(3000),
    });
    if (res.ok) return true;
    throw new Error(`HTTP ${res.status}`);
  } catch (e) {
    // .ci/run enables the plugin: under CI a missing reference is a failure, not a skip.
    if (process.env.CI === 'true')
      throw new Error(`RabbitMQ's management API is not reachable at ${RABBIT_API}`, { cause: e });
    t.skip(
      skipReason(
        'rabbitmq',
        `RabbitMQ's management API is not reachable at ${RABBIT_API} (${(e as Error).message}): rabbitmq-plugins enable rabbitmq_management`,
      ),
    );
    return false;
  }
}

describe("management API shapes against RabbitMQ's", () => {
  let redrive: AmqpServer | undefined;
  const conns: ChannelModel[] = [];
  const suffix = `${process.pid}-${Date.now()}`;
  const names = { exchange: `shape-x-${suffix}`, queue: `shape-q-${suffix}`, connection: `shape-${suffix}` };

  before(async () => {
    redrive = await startAmqpServer({ storage: 'memory' });
  });

  after(async () => {
    for (const c of conns) {
      const ch = await c.createChannel().catch(() => undefined);
      await ch?.deleteQueue(names.queue).catch(() => undefined);
      await ch?.deleteExchange(names.exchange).catch(() => undefined);
      await c.close().catch(() => undefined);
    }
    await redrive?.server.stop();
    redrive?.server.cleanup();
  });

  async function topology(url: string): Promise<void> {
    const c = await amqp.connect(url, { clientProperties: { connection_name: names.connection } });
    conns.push(c);
    const ch = await c.createChannel();
    await ch.prefetch(3);
    await ch.assertExchange(names.exchange, 'topic', { durable: true });
    await ch.assertQueue(names.queue, { durable: true, arguments: { 'x-message-ttl': 60000 } });
    await ch.bindQueue(names.queue, names.exchange, 'order.#', { 'x-note': 'kept' });
    ch.sendToQueue(names.queue, Buffer.from('1'));
    ch.sendToQueue(names.queue, Buffer.from('2'));
    await ch.checkQueue(names.queue);
    await ch.consume(names.queue, () => undefined, { noAck: false, consumerTag: `shape-consumer-${suffix}` });
  }

  /** One object of each kind from a broker; RabbitMQ's statistics arrive every 5 s, so it is asked until they have. */
  async function objects(base: string): Promise<Record<string, Json>> {
    const get = async (p: string) =>
      (await fetch(`${base}/${p}`, { headers: { authorization: GUEST } })).json() as Promise<any>;
    for (let i = 0; ; i++) {
      const connection = ((await get('connections')) as Json[]).find(
        (x) => x.client_properties?.connection_name === names.connection,
      );
      const channel =
        connection &&
        ((await get('channels')) as Json[]).find(
          (x) => x.connection_details?.name === connection.name && x.messages_unacknowledged === 2,
        );
      const consumer = ((await get('consumers')) as Json[]).find((x) => x.queue?.name === names.queue);
      const queue = await get(`queues/%2F/${names.queue}`);
      // Every figure compared below, as the topology made it: RabbitMQ's queue statistics
      // may show the deliveries a round before the consumer.
      const settled = queue.messages_unacknowledged === 2 && queue.consumers === 1 && connection?.channels === 1;
      if (connection && channel && consumer && settled) {
        const binding = ((await get('bindings/%2F')) as Json[]).find((b) => b.source === names.exchange);
        return {
          connection,
          channel,
          consumer,
          queue,
          binding: binding!,
          exchange: await get(`exchanges/%2F/${names.exchange}`),
        };
      }
      assert.ok(i < 150, `${base}: the topology did not show within 15 s`);
      await pause(100);
    }
  }

  test("every field of Redrive's connections, channels, consumers, exchanges, bindings and queues has RabbitMQ's name and type", async (t) => {
    if (!(await rabbitOrSkip(t).then((c) => (c ? (void c.close(), true) : false)))) return;
    if (!(await rabbitApiOrSkip(t))) return;
    await topology(RABBIT_URL);
    await topology(redrive!.url);
    const theirs = await objects(RABBIT_API);
    const ours = await objects(`${redrive!.server.url}/api`);
    const problems = Object.keys(REQUIRED).flatMap((what) => differences(what, ours[what]!, theirs[what]!));
    assert.deepEqual(problems, []);
    // The values that mean the same on both sides.
    for (const what of ['channel', 'consumer', 'queue', 'binding', 'exchange'] as const) {
      const same = {
        channel: ['prefetch_count', 'messages_unacknowledged', 'consumer_count', 'number', 'state'],
        consumer: ['ack_required', 'prefetch_count', 'exclusive', 'queue'],
        queue: [
          'messages',
          'messages_ready',
          'messages_unacknowledged',
          'consumers',
          'durable',
          'arguments',
          'type',
          'state',
        ],
        binding: ['routing_key', 'arguments', 'destination_type'],
        exchange: ['type', 'durable', 'auto_delete', 'internal', 'arguments'],
      }[what];
      for (const k of same) assert.deepEqual(ours[what]![k], theirs[what]![k], `${what}.${k}`);
    }
    assert.equal(ours.connection!.protocol, theirs.connection!.protocol);
    assert.equal(ours.connection!.user_provided_name, theirs.connection!.user_provided_name);
  });
});

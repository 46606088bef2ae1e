/**
 * Scenarios of the AMQP differential test: each runs through amqplib against a broker
 * and returns what a client observes (deliveries in order, redelivered flags, returns,
 * confirms, queue depths, reply codes). The test runs each against RabbitMQ and Redrive
 * and compares. Names are prefixed per run (RabbitMQ is shared), and the prefix is
 * removed from what is observed.
 */
import amqp, {
  type Channel,
  type ChannelModel,
  type ConfirmChannel,
  type ConsumeMessage,
  type GetMessage,
} from 'amqplib';
import { pause } from './support.js';

export class Ctx {
  readonly queues = new Set<string>();
  readonly exchanges = new Set<string>();
  constructor(
    readonly conn: ChannelModel,
    readonly prefix: string,
    readonly url: string,
    readonly policies?: PolicyControl,
  ) {}
  q(name: string): string {
    this.queues.add(this.prefix + name);
    return this.prefix + name;
  }
  x(name: string): string {
    this.exchanges.add(this.prefix + name);
    return this.prefix + name;
  }
  strip(s: string): string {
    return s.startsWith(this.prefix) ? s.slice(this.prefix.length) : s;
  }
  async channel(): Promise<ConfirmChannel> {
    const ch = await this.conn.createConfirmChannel();
    ch.on('error', () => undefined);
    return ch;
  }
  async cleanup(): Promise<void> {
    const ch = await this.conn.createChannel();
    for (const q of this.queues) await ch.deleteQueue(q).catch(() => undefined);
    for (const x of this.exchanges) await ch.deleteExchange(x).catch(() => undefined);
    await ch.close().catch(() => undefined);
  }
}

/** Sets and clears policies on the broker under test (rabbitmqctl, or Redrive's management API). */
export interface PolicyControl {
  set(name: string, pattern: string, definition: Record<string, unknown>): Promise<void>;
  clear(name: string): Promise<void>;
}

export interface Scenario {
  name: string;
  run(c: Ctx): Promise<unknown>;
}

/** The reply code an operation failed with, or 'ok'. */
async function code(p: Promise<unknown>): Promise<number | string> {
  try {
    await p;
    return 'ok';
  } catch (e) {
    return (e as { code?: number }).code ?? String(e);
  }
}

const body = (m: GetMessage | ConsumeMessage | false) => (m ? m.content.toString() : null);
const got = (m: GetMessage | false) => (m ? [m.content.toString(), m.fields.redelivered, m.fields.messageCount] : null);

async function publishAll(ch: ConfirmChannel, exchange: string, key: string, bodies: string[]): Promise<void> {
  for (const b of bodies) ch.publish(exchange, key, Buffer.from(b));
  await ch.waitForConfirms();
}

/** Consumes until `n` messages arrived (or a second passed), acking each with `settle`. */
async function consume(
  ch: Channel,
  queue: string,
  n: number,
  settle: (m: ConsumeMessage) => void,
): Promise<[string, boolean][]> {
  const out: [string, boolean][] = [];
  let done!: () => void;
  const finished = new Promise<void>((r) => (done = r));
  const { consumerTag } = await ch.consume(queue, (m) => {
    if (!m) return;
    out.push([m.content.toString(), m.fields.redelivered]);
    settle(m);
    if (out.length >= n) done();
  });
  await Promise.race([finished, pause(1500)]);
  await ch.cancel(consumerTag);
  return out;
}

const depth = async (c: Ctx, q: string) => {
  const ch = await c.channel();
  const { messageCount, consumerCount } = await ch.checkQueue(q);
  await ch.close();
  return [messageCount, consumerCount];
};

export const scenarios: Scenario[] = [
  {
    name: 'publish, consume with prefetch, ack',
    async run(c) {
      const ch = await c.channel();
      const q = c.q('pca');
      await ch.assertQueue(q);
      await publishAll(ch, '', q, ['1', '2', '3', '4', '5']);
      const before = await depth(c, q);
      await ch.prefetch(2);
      const seen = await consume(ch, q, 5, (m) => ch.ack(m));
      await pause(100);
      return { before, seen, after: await depth(c, q) };
    },
  },
  {
    name: 'basic.get with message counts, noAck',
    async run(c) {
      const ch = await c.channel();
      const q = c.q('get');
      await ch.assertQueue(q);
      const empty = await ch.get(q);
      await publishAll(ch, '', q, ['a', 'b', 'c']);
      const first = await ch.get(q);
      const second = await ch.get(q, { noAck: true });
      if (first) ch.ack(first);
      const third = await ch.get(q);
      if (third) ch.ack(third);
      await pause(100);
      return { empty, first: got(first), second: got(second), third: got(third), after: await depth(c, q) };
    },
  },
  {
    name: 'nack and reject with requeue: redelivered first, flagged',
    async run(c) {
      const ch = await c.channel();
      const q = c.q('req');
      await ch.assertQueue(q);
      await publishAll(ch, '', q, ['a', 'b', 'c']);
      const a = await ch.get(q);
      const b = await ch.get(q);
      if (a) ch.nack(a, false, true);
      if (b) ch.reject(b, true);
      await pause(100);
      const order = [];
      for (let m = await ch.get(q); m; m = await ch.get(q)) {
        order.push([m.content.toString(), m.fields.redelivered]);
        ch.ack(m);
      }
      return order;
    },
  },
  {
    name: 'nack multiple with requeue, then ack multiple',
    async run(c) {
      const ch = await c.channel();
      const q = c.q('mul');
      await ch.assertQueue(q);
      await publishAll(ch, '', q, ['1', '2', '3', '4']);
      const msgs = [await ch.get(q), await ch.get(q), await ch.get(q)];
      ch.nack(msgs[1] as GetMessage, true, true);
      await pause(100);
      const again = [];
      for (let m = await ch.get(q); m; m = await ch.get(q)) again.push([m.content.toString(), m.fields.redelivered]);
      const last = await ch.get(q);
      ch.ackAll();
      await pause(100);
      return { kept: body(msgs[2]!), again, last: body(last), after: await depth(c, q) };
    },
  },
  {
    name: 'reject and nack without requeue on a queue without a dead-letter exchange drop the message',
    async run(c) {
      const ch = await c.channel();
      const q = c.q('drop');
      await ch.assertQueue(q);
      await publishAll(ch, '', q, ['x', 'y', 'z']);
      const x = await ch.get(q);
      const y = await ch.get(q);
      ch.reject(x as GetMessage, false);
      ch.nack(y as GetMessage, false, false);
      await pause(100);
      return { left: body(await ch.get(q, { noAck: true })), after: await depth(c, q) };
    },
  },
  {
    name: 'a channel closed with unacknowledged messages gives them back',
    async run(c) {
      const ch1 = await c.channel();
      const q = c.q('close');
      await ch1.assertQueue(q);
      await publishAll(ch1, '', q, ['1', '2', '3', '4']);
      await ch1.prefetch(3);
      const held = await consume(ch1, q, 3, () => undefined);
      await ch1.close();
      await pause(200);
      const ch2 = await c.channel();
      const back = [];
      for (let m = await ch2.get(q, { noAck: true }); m; m = await ch2.get(q, { noAck: true }))
        back.push([m.content.toString(), m.fields.redelivered]);
      return { held, back };
    },
  },
  {
    name: 'publisher confirms',
    async run(c) {
      const ch = await c.channel();
      const q = c.q('conf');
      await ch.assertQueue(q);
      const acks: (string | null)[] = [];
      await Promise.all(
        ['1', '2', '3'].map(
          (b) =>
            new Promise<void>((resolve) => {
              ch.publish('', q, Buffer.from(b), {}, (err) => {
                acks.push(err ? 'nack' : b);
                resolve();
              });
            }),
        ),
      );
      // A publish that routes nowhere is confirmed too.
      const unrouted = await new Promise((resolve) =>
        ch.publish('', `${c.prefix}nowhere`, Buffer.from('n'), {}, (err) => resolve(err ? 'nack' : 'ack')),
      );
      return { acks, unrouted, depth: await depth(c, q) };
    },
  },
  {
    name: 'mandatory publishes that route nowhere come back',
    async run(c) {
      const ch = await c.channel();
      const x = c.x('mand');
      const q = c.q('mand');
      await ch.assertExchange(x, 'direct', { durable: false });
      await ch.assertQueue(q);
      await ch.bindQueue(q, x, 'yes');
      const returned: unknown[] = [];
      ch.on('return', (m: ConsumeMessage) =>
        returned.push([
          m.content.toString(),
          (m.fields as unknown as { replyCode: number }).replyCode,
          c.strip(m.fields.exchange),
          c.strip(m.fields.routingKey),
        ]),
      );
      ch.publish(x, 'no', Buffer.from('r1'), { mandatory: true });
      ch.publish(x, 'yes', Buffer.from('kept'), { mandatory: true });
      ch.publish(x, 'no', Buffer.from('lost'), { mandatory: false });
      ch.publish('', `${c.prefix}missing`, Buffer.from('r2'), { mandatory: true });
      await ch.waitForConfirms();
      await pause(100);
      return { returned, depth: await depth(c, q) };
    },
  },
  {
    name: 'direct, fanout, topic, headers and exchange-to-exchange routing',
    async run(c) {
      const ch = await c.channel();
      const [dx, fx, tx, hx, ex] = ['d', 'f', 't', 'h', 'e2e'].map((n) => c.x(n));
      await ch.assertExchange(dx!, 'direct', { durable: false });
      await ch.assertExchange(fx!, 'fanout', { durable: false });
      await ch.assertExchange(tx!, 'topic', { durable: false });
      await ch.assertExchange(hx!, 'headers', { durable: false });
      await ch.assertExchange(ex!, 'fanout', { durable: false });
      const qs = ['q1', 'q2', 'q3', 'q4'].map((n) => c.q(n));
      for (const q of qs) await ch.assertQueue(q);
      await ch.bindQueue(qs[0]!, dx!, 'red');
      await ch.bindQueue(qs[1]!, dx!, 'blue');
      await ch.bindQueue(qs[0]!, fx!, '');
      await ch.bindQueue(qs[1]!, fx!, '');
      await ch.bindQueue(qs[2]!, tx!, 'a.*.c');
      await ch.bindQueue(qs[3]!, tx!, 'a.#');
      await ch.bindQueue(qs[2]!, hx!, '', { 'x-match': 'all', k: 'v', n: 1 });
      await ch.bindQueue(qs[3]!, hx!, '', { 'x-match': 'any', k: 'v', z: 'w' });
      await ch.bindExchange(fx!, ex!, '');
      ch.publish(dx!, 'red', Buffer.from('d-red'));
      ch.publish(dx!, 'green', Buffer.from('d-green'));
      ch.publish(fx!, 'any', Buffer.from('f'));
      for (const k of ['a.b.c', 'a', 'a.b.b.c', 'b.a']) ch.publish(tx!, k, Buffer.from(`t-${k}`));
      ch.publish(hx!, '', Buffer.from('h-all'), { headers: { k: 'v', n: 1 } });
      ch.publish(hx!, '', Buffer.from('h-any'), { headers: { z: 'w' } });
      ch.publish(hx!, '', Buffer.from('h-none'), { headers: { k: 'x' } });
      ch.publish(ex!, '', Buffer.from('e2e'));
      await ch.waitForConfirms();
      const out: Record<string, string[]> = {};
      for (const q of qs) {
        out[c.strip(q)] = [];
        for (let m = await ch.get(q, { noAck: true }); m; m = await ch.get(q, { noAck: true }))
          out[c.strip(q)]!.push(m.content.toString());
      }
      await ch.unbindQueue(qs[0]!, dx!, 'red');
      ch.publish(dx!, 'red', Buffer.from('after-unbind'));
      await ch.waitForConfirms();
      out.afterUnbind = [body(await ch.get(qs[0]!, { noAck: true })) ?? '-'];
      return out;
    },
  },
  {
    name: 'per-message expiration and queue TTL expire messages',
    async run(c) {
      const ch = await c.channel();
      const q = c.q('ttl');
      const qt = c.q('qttl');
      await ch.assertQueue(q);
      await ch.assertQueue(qt, { arguments: { 'x-message-ttl': 1000 } });
      ch.sendToQueue(q, Buffer.from('short'), { expiration: '100' });
      ch.sendToQueue(q, Buffer.from('long'), { expiration: '60000' });
      ch.sendToQueue(q, Buffer.from('none'));
      ch.sendToQueue(qt, Buffer.from('queue-ttl'));
      await ch.waitForConfirms();
      await pause(2500);
      const left = [];
      for (let m = await ch.get(q, { noAck: true }); m; m = await ch.get(q, { noAck: true }))
        left.push([m.content.toString(), m.properties.expiration]);
      return { left, queueTtl: await depth(c, qt) };
    },
  },
  {
    name: 'a burst of publishes keeps its order; a bad one in a burst closes the channel after those before it',
    async run(c) {
      const ch = await c.channel();
      const q = c.q('burst');
      await ch.assertQueue(q);
      const bodies = Array.from({ length: 300 }, (_, i) => `b${i}`);
      await publishAll(ch, '', q, bodies);
      const order: string[] = [];
      for (let m = await ch.get(q, { noAck: true }); m; m = await ch.get(q, { noAck: true }))
        order.push(m.content.toString());
      const bad = await c.channel();
      let closed: unknown = 'open';
      bad.on('error', (e: { code?: number }) => (closed = e.code));
      for (let i = 0; i < 20; i++) bad.publish(i === 10 ? `${c.prefix}missing` : '', q, Buffer.from(`c${i}`));
      await bad.waitForConfirms().catch(() => undefined);
      await pause(200);
      const stored = (await depth(c, q))[0];
      return { inOrder: order.join() === bodies.join(), count: order.length, closed, stored };
    },
  },
  {
    name: 'errors: reply codes of channel errors',
    async run(c) {
      const codes: Record<string, number | string> = {};
      const attempt = async (name: string, op: (ch: Channel) => Promise<unknown>) => {
        const ch = await c.channel();
        codes[name] = await code(op(ch));
        await ch.close().catch(() => undefined);
      };
      const q = c.q('err');
      const x = c.x('err');
      await attempt('passive declare of a missing queue', (ch) => ch.checkQueue(`${c.prefix}missing`));
      await attempt('passive declare of a missing exchange', (ch) => ch.checkExchange(`${c.prefix}missing`));
      await attempt('declare', (ch) => ch.assertQueue(q, { durable: true }));
      await attempt('redeclare with another durable', (ch) => ch.assertQueue(q, { durable: false }));
      await attempt('redeclare with another argument', (ch) =>
        ch.assertQueue(q, { durable: true, arguments: { 'x-max-length': 3 } }),
      );
      await attempt('exchange', (ch) => ch.assertExchange(x, 'direct', { durable: false }));
      await attempt('exchange redeclared with another type', (ch) =>
        ch.assertExchange(x, 'fanout', { durable: false }),
      );
      await attempt('reserved exchange name', (ch) => ch.assertExchange(`amq.${c.prefix}`, 'direct'));
      await attempt('bind to a missing exchange', (ch) => ch.bindQueue(q, `${c.prefix}missing`, 'k'));
      await attempt('bind a missing queue', (ch) => ch.bindQueue(`${c.prefix}missing`, x, 'k'));
      await attempt('consume from a missing queue', (ch) => ch.consume(`${c.prefix}missing`, () => undefined));
      await attempt('get from a missing queue', (ch) => ch.get(`${c.prefix}missing`));
      await attempt('publish to a missing exchange', async (ch) => {
        ch.publish(`${c.prefix}missing`, 'k', Buffer.from('m'));
        await (ch as ConfirmChannel).waitForConfirms();
      });
      await attempt('ack of an unknown delivery tag', async (ch) => {
        ch.ack({ fields: { deliveryTag: 99 } } as GetMessage);
        await ch.checkQueue(q);
      });
      await attempt('invalid x-message-ttl', (ch) =>
        ch.assertQueue(c.q('badttl'), { arguments: { 'x-message-ttl': -1 } }),
      );
      return codes;
    },
  },
  {
    name: 'errors: connection errors close the connection with their code',
    async run(c) {
      const codes: Record<string, unknown> = {};
      const attempt = async (name: string, op: (ch: Channel) => Promise<unknown>) => {
        const conn = await amqp.connect(c.url);
        let closed: unknown = 'open';
        conn.on('error', (e: { code?: number }) => (closed = e.code));
        const ch = await conn.createChannel();
        ch.on('error', () => undefined);
        codes[name] = [await code(op(ch)), await pause(100).then(() => closed)];
        await conn.close().catch(() => undefined);
      };
      await attempt('exchange of an unknown type', (ch) => ch.assertExchange(c.x('unknown'), 'nosuchtype'));
      const q = c.q('tags');
      await attempt('a consumer tag used twice', async (ch) => {
        await ch.assertQueue(q);
        await ch.consume(q, () => undefined, { consumerTag: 'same' });
        await ch.consume(q, () => undefined, { consumerTag: 'same' });
      });
      return codes;
    },
  },
];

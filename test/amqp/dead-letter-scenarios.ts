/**
 * Dead-letter exchange scenarios of the AMQP differential test (dead-letter.test.ts):
 * what a client sees of dead-lettered messages (bodies, order, exchange and routing key,
 * x-death and the death headers, with times masked) and the queue depths.
 */
import type { ConfirmChannel, GetMessage, Options } from 'amqplib';
import type { Ctx, Scenario } from './scenarios.js';
import { pause } from './support.js';

/**
 * Headers RabbitMQ 3.10 does not set and Redrive does: x-last-death-* (RabbitMQ 3.13
 * adds them) and quorum queues' x-delivery-count, which Redrive does not send.
 */
const IGNORED = /^(x-last-death-|x-delivery-count$)/;

/** A value as compared: names without the run's prefix, timestamps masked. */
function norm(c: Ctx, v: unknown): unknown {
  if (typeof v === 'string') return c.strip(v);
  if (Array.isArray(v)) return v.map((x) => norm(c, x));
  if (v && typeof v === 'object') {
    if ((v as { '!'?: string })['!'] === 'timestamp') return 'time';
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (!IGNORED.test(k)) out[k] = norm(c, x);
    return out;
  }
  return v;
}

/** What a client sees of a message that came through dead-lettering. */
function seen(c: Ctx, m: GetMessage) {
  return {
    body: m.content.toString(),
    redelivered: m.fields.redelivered,
    exchange: c.strip(m.fields.exchange),
    routingKey: c.strip(m.fields.routingKey),
    expiration: m.properties.expiration ?? null,
    headers: norm(c, m.properties.headers ?? {}),
  };
}

/** Every ready message of the queue, acknowledged, in order. */
async function drain(c: Ctx, ch: ConfirmChannel, q: string) {
  const out = [];
  for (let m = await ch.get(q); m; m = await ch.get(q)) {
    out.push(seen(c, m));
    ch.ack(m);
  }
  return out;
}

async function get(ch: ConfirmChannel, q: string): Promise<GetMessage> {
  const m = await ch.get(q);
  if (!m) throw new Error(`no message in ${q}`);
  return m;
}

/** Publishes and waits for the confirm: 'ack' or 'nack'. */
function publish(
  ch: ConfirmChannel,
  exchange: string,
  key: string,
  body: string,
  opts: Options.Publish = {},
): Promise<string> {
  return new Promise((resolve) =>
    ch.publish(exchange, key, Buffer.from(body), opts, (err) => resolve(err ? 'nack' : 'ack')),
  );
}

/** An exchange (`dlx`, fanout by default) with a queue (`dlq`) bound to it by `key`: where dead letters are collected. */
async function sink(
  c: Ctx,
  ch: ConfirmChannel,
  { type = 'fanout', x = 'dlx', q = 'dlq', key = '' } = {},
): Promise<{ dlx: string; dlq: string }> {
  const dlx = c.x(x);
  const dlq = c.q(q);
  await ch.assertExchange(dlx, type);
  await ch.assertQueue(dlq);
  await ch.bindQueue(dlq, dlx, key);
  return { dlx, dlq };
}

/** A queue dead-lettering into `dlx`, with more arguments. */
const dlxArgs = (dlx: string, more: Record<string, unknown> = {}) => ({
  arguments: { 'x-dead-letter-exchange': dlx, ...more },
});

/** Time for a TTL of one second to pass and Redrive's once-a-second expiry sweep to run. */
const TTL_WAIT_MS = 2600;

export const deadLetterScenarios: Scenario[] = [
  {
    name: 'reject and nack with and without requeue into a dead-letter exchange',
    async run(c) {
      const ch = await c.channel();
      const src = c.q('src');
      const { dlx, dlq } = await sink(c, ch, { type: 'direct', key: src });
      await ch.assertQueue(src, dlxArgs(dlx));
      for (const b of ['a', 'b', 'c', 'd'])
        await publish(ch, '', src, b, { headers: { h: 'v' }, messageId: `id-${b}` });
      const [a, b, cc, d] = [await get(ch, src), await get(ch, src), await get(ch, src), await get(ch, src)];
      ch.reject(a, false);
      ch.nack(b, false, false);
      ch.reject(cc, true);
      ch.nack(d, false, true);
      await pause(150);
      const requeued = await drain(c, ch, src);
      return { requeued, dead: await drain(c, ch, dlq) };
    },
  },
  {
    name: 'per-queue and per-message TTL dead-letter with the dead-letter routing key',
    async run(c) {
      const ch = await c.channel();
      const { dlx, dlq: dlq1 } = await sink(c, ch, { type: 'direct', q: 'dl-q', key: 'from-q' });
      const { dlq: dlq2 } = await sink(c, ch, { type: 'direct', q: 'dl-m', key: 'from-m' });
      const byQueue = c.q('ttl-q');
      const byMessage = c.q('ttl-m');
      await ch.assertQueue(byQueue, dlxArgs(dlx, { 'x-message-ttl': 1000, 'x-dead-letter-routing-key': 'from-q' }));
      await ch.assertQueue(byMessage, dlxArgs(dlx, { 'x-dead-letter-routing-key': 'from-m' }));
      await publish(ch, '', byQueue, 'q1');
      await publish(ch, '', byQueue, 'q2', { expiration: '60000' });
      await publish(ch, '', byMessage, 'm1', { expiration: '1000' });
      await publish(ch, '', byMessage, 'm2', { expiration: '1000', CC: ['x'] });
      await pause(TTL_WAIT_MS);
      return {
        q: await drain(c, ch, dlq1),
        m: await drain(c, ch, dlq2),
        left: [await drain(c, ch, byQueue), await drain(c, ch, byMessage)],
      };
    },
  },
  {
    name: 'overflow: drop-head dead-letters the oldest, reject-publish refuses, reject-publish-dlx refuses and dead-letters',
    async run(c) {
      const ch = await c.channel();
      const { dlx, dlq } = await sink(c, ch);
      const out: Record<string, unknown> = {};
      for (const mode of ['drop-head', 'reject-publish', 'reject-publish-dlx']) {
        const q = c.q(mode);
        await ch.assertQueue(q, dlxArgs(dlx, { 'x-max-length': 2, 'x-overflow': mode }));
        const confirms = [];
        for (const b of ['1', '2', '3']) confirms.push(await publish(ch, '', q, `${mode}-${b}`));
        await pause(100);
        out[mode] = { confirms, left: await drain(c, ch, q), dead: await drain(c, ch, dlq) };
      }
      const bytes = c.q('bytes');
      await ch.assertQueue(bytes, dlxArgs(dlx, { 'x-max-length-bytes': 5 }));
      for (const b of ['aa', 'bb', 'cc']) await publish(ch, '', bytes, b);
      await pause(100);
      out.bytes = { left: await drain(c, ch, bytes), dead: await drain(c, ch, dlq) };
      return out;
    },
  },
  {
    name: 'delivery limit on a quorum queue',
    async run(c) {
      const ch = await c.channel();
      const { dlx, dlq } = await sink(c, ch);
      const q = c.q('quorum');
      await ch.assertQueue(q, { durable: true, ...dlxArgs(dlx, { 'x-queue-type': 'quorum', 'x-delivery-limit': 1 }) });
      await publish(ch, '', q, 'limited');
      const deliveries = [];
      for (let i = 0; i < 3; i++) {
        const m = await ch.get(q);
        deliveries.push(m && [m.content.toString(), m.fields.redelivered]);
        if (!m) break;
        ch.nack(m, false, true);
        await pause(150);
      }
      return { deliveries, dead: await drain(c, ch, dlq) };
    },
  },
  {
    name: 'dead-letter routing: own keys with CC and BCC, or the dead-letter routing key (CC removed)',
    async run(c) {
      const ch = await c.channel();
      const src = c.x('src');
      const dlx = c.x('dlx');
      await ch.assertExchange(src, 'direct');
      await ch.assertExchange(dlx, 'direct');
      const own = c.q('own');
      const fixed = c.q('fixed');
      await ch.assertQueue(own, dlxArgs(dlx));
      await ch.assertQueue(fixed, dlxArgs(dlx, { 'x-dead-letter-routing-key': 'k-fixed' }));
      await ch.bindQueue(own, src, 'a');
      await ch.bindQueue(fixed, src, 'f');
      const sinks: Record<string, string> = {};
      for (const k of ['a', 'cc', 'bcc', 'f', 'k-fixed']) {
        sinks[k] = c.q(`dl-${k}`);
        await ch.assertQueue(sinks[k]!);
        await ch.bindQueue(sinks[k]!, dlx, k);
      }
      await publish(ch, src, 'a', 'to-own', { CC: ['cc'], BCC: ['bcc'] });
      await publish(ch, src, 'f', 'to-fixed', { CC: ['cc'], headers: { keep: 1 } });
      const sourceCopies = { own: await drain(c, ch, own), fixed: [] as unknown[] };
      await publish(ch, src, 'a', 'to-own-2', { CC: ['cc'], BCC: ['bcc'] });
      ch.reject(await get(ch, own), false);
      ch.reject(await get(ch, fixed), false);
      await pause(150);
      const dead: Record<string, unknown> = {};
      for (const [k, q] of Object.entries(sinks)) dead[k] = await drain(c, ch, q);
      return { sourceCopies, dead };
    },
  },
  {
    name: 'fanout, topic and headers exchanges as dead-letter exchanges',
    async run(c) {
      const ch = await c.channel();
      const out: Record<string, unknown> = {};
      const kinds: [string, (dlx: string, q1: string, q2: string) => Promise<void>][] = [
        [
          'fanout',
          async (dlx, q1, q2) => {
            await ch.bindQueue(q1, dlx, '');
            await ch.bindQueue(q2, dlx, 'ignored');
          },
        ],
        [
          'topic',
          async (dlx, q1, q2) => {
            await ch.bindQueue(q1, dlx, 'order.*');
            await ch.bindQueue(q2, dlx, '#.eu');
          },
        ],
        [
          'headers',
          async (dlx, q1, q2) => {
            await ch.bindQueue(q1, dlx, '', { 'x-match': 'all', kind: 'order' });
            await ch.bindQueue(q2, dlx, '', { 'x-match': 'any', kind: 'refund', region: 'eu' });
          },
        ],
      ];
      for (const [type, bind] of kinds) {
        const dlx = c.x(`dlx-${type}`);
        await ch.assertExchange(dlx, type);
        const src = c.q(`src-${type}`);
        const q1 = c.q(`${type}-1`);
        const q2 = c.q(`${type}-2`);
        await ch.assertQueue(src, dlxArgs(dlx));
        await ch.assertQueue(q1);
        await ch.assertQueue(q2);
        await bind(dlx, q1, q2);
        await publish(ch, '', src, 'x', { CC: ['order.new.eu'], headers: { kind: 'order', region: 'eu' } });
        await publish(ch, '', src, 'y', { CC: ['order.paid'], headers: { kind: 'refund' } });
        ch.reject(await get(ch, src), false);
        ch.reject(await get(ch, src), false);
        await pause(150);
        out[type] = [await drain(c, ch, q1), await drain(c, ch, q2)];
      }
      return out;
    },
  },
  {
    name: 'dead-letter cycles: dropped without a rejection, kept with one',
    async run(c) {
      const ch = await c.channel();
      // Expiry into itself through the default exchange: a cycle at once, dropped.
      const self = c.q('self');
      await ch.assertQueue(self, dlxArgs('', { 'x-message-ttl': 1000 }));
      await publish(ch, '', self, 'loop');
      // Two queues expiring into each other: dropped when it would reach the first again.
      const a = c.q('a');
      const b = c.q('b');
      await ch.assertQueue(a, dlxArgs('', { 'x-message-ttl': 1000, 'x-dead-letter-routing-key': b }));
      await ch.assertQueue(b, dlxArgs('', { 'x-message-ttl': 3000, 'x-dead-letter-routing-key': a }));
      await publish(ch, '', a, 'pingpong');
      // Rejections back into the same queue: a consumer decides, so it goes round.
      const rej = c.q('rej');
      await ch.assertQueue(rej, dlxArgs(''));
      await publish(ch, '', rej, 'again');
      for (let i = 0; i < 2; i++) {
        ch.reject(await get(ch, rej), false);
        await pause(100);
      }
      const rejected = await drain(c, ch, rej);
      const depths = async () => Promise.all([self, a, b].map(async (q) => (await ch.checkQueue(q)).messageCount));
      await pause(TTL_WAIT_MS);
      const inB = await depths();
      await pause(TTL_WAIT_MS + 1000);
      return { rejected, inB, end: await depths() };
    },
  },
  {
    name: 'x-expires deletes an unused queue without dead-lettering its messages; a consumer keeps it',
    async run(c) {
      const ch = await c.channel();
      const { dlx, dlq } = await sink(c, ch);
      const idle = c.q('idle');
      const used = c.q('used');
      await ch.assertQueue(idle, dlxArgs(dlx, { 'x-expires': 1000 }));
      await ch.assertQueue(used, { arguments: { 'x-expires': 1000 } });
      await publish(ch, '', idle, 'lost with its queue');
      const { consumerTag } = await ch.consume(used, () => undefined);
      const exists = async (q: string) => {
        const probe = await c.channel();
        try {
          return (await probe.checkQueue(q)).messageCount;
        } catch (e) {
          return (e as { code?: number }).code;
        }
      };
      await pause(2000);
      const whileConsumed = { idle: await exists(idle), used: await exists(used), dlq: await exists(dlq) };
      await ch.cancel(consumerTag);
      await pause(2000);
      return { whileConsumed, afterCancel: await exists(used) };
    },
  },
  {
    name: 'a policy sets the dead-letter exchange and length limit; queue arguments override it',
    async run(c) {
      const ch = await c.channel();
      const { dlx: policyDlx, dlq: fromPolicy } = await sink(c, ch, { x: 'pol-dlx', q: 'pol-dlq' });
      const { dlx: argDlx, dlq: fromArg } = await sink(c, ch, { x: 'arg-dlx', q: 'arg-dlq' });
      const name = `${c.prefix}policy`;
      await c.policies!.set(name, `^${c.prefix}pq-`, { 'dead-letter-exchange': policyDlx, 'max-length': 1 });
      try {
        await pause(500);
        const plain = c.q('pq-plain');
        const own = c.q('pq-own');
        await ch.assertQueue(plain);
        await ch.assertQueue(own, dlxArgs(argDlx, { 'x-max-length': 5 }));
        for (const q of [plain, own]) for (const b of ['1', '2']) await publish(ch, '', q, `${c.strip(q)}-${b}`);
        ch.reject(await get(ch, own), false);
        await pause(150);
        const during = { policyDlq: await drain(c, ch, fromPolicy), argDlq: await drain(c, ch, fromArg) };
        await c.policies!.clear(name);
        await pause(500);
        for (const b of ['3', '4']) await publish(ch, '', plain, `pq-plain-${b}`);
        ch.reject(await get(ch, plain), false);
        await pause(150);
        return { during, plainAfter: await drain(c, ch, plain), policyDlqAfter: await drain(c, ch, fromPolicy) };
      } finally {
        await c.policies!.clear(name).catch(() => undefined);
      }
    },
  },
];

/**
 * Bad input on the AMQP port. Targeted malformed frames go to RabbitMQ and to Redrive,
 * and each must end the same way (connection or channel close, same reply code). Then
 * hundreds of randomly mutated frames go to Redrive: every answer is a close with a known
 * code, a normal reply, or a wait for more bytes; the server stays up and new
 * connections keep working throughout.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Writer } from '../../src/protocols/amqp/codec.js';
import { methodFrame } from '../../src/protocols/amqp/frames.js';
import { encodeMethod, type Args, type MethodName } from '../../src/protocols/amqp/spec.js';
import { RawClient, type Answer } from './raw-client.js';
import { rabbitOrSkip, useAmqpServer } from './support.js';

/** A frame with any type, channel, payload and end octet. */
function frame(type: number, channel: number, payload: Buffer, end = 0xce, size = payload.length): Buffer {
  const b = Buffer.alloc(payload.length + 8);
  b[0] = type;
  b.writeUInt16BE(channel, 1);
  b.writeUInt32BE(size, 3);
  payload.copy(b, 7);
  b[payload.length + 7] = end;
  return b;
}

function payload(name: MethodName, args?: Args): Buffer {
  const w = new Writer();
  encodeMethod(w, name, args);
  return w.result();
}

const header = (classId: number, size: number) => {
  const w = new Writer();
  w.short(classId).short(0).longlong(size).short(0);
  return w.result();
};

const publish = () => methodFrame(1, 'basic.publish', { exchange: '', routingKey: 'malformed-nowhere' });
const declare = (queue = 'malformed-q') => payload('queue.declare', { queue, arguments: new Map() });

const cases: Record<string, () => Buffer[]> = {
  'frame end octet wrong': () => [frame(1, 1, declare(), 0x00)],
  'unknown frame type': () => [frame(5, 1, Buffer.from([0, 0, 0, 0]))],
  'frame larger than frame_max': () => [frame(1, 1, Buffer.alloc(0), 0xce, 10_000_000)],
  'heartbeat on a channel': () => [frame(8, 1, Buffer.alloc(0))],
  'method on a channel not opened': () => [frame(1, 7, declare())],
  'content header with no publish': () => [frame(2, 1, header(60, 3))],
  'body frame with no publish': () => [frame(3, 1, Buffer.from('abc'))],
  'method where a content header is due': () => [publish(), frame(1, 1, declare())],
  'content header of another class': () => [publish(), frame(2, 1, header(50, 3))],
  'truncated method arguments': () => [frame(1, 1, declare().subarray(0, 9))],
  'unknown method of a known class': () => [frame(1, 1, Buffer.from([0, 60, 3, 231]))],
  'unknown class': () => [frame(1, 1, Buffer.from([3, 231, 0, 10]))],
  'method frame shorter than its ids': () => [frame(1, 1, Buffer.from([0, 50]))],
  'second channel.open': () => [methodFrame(1, 'channel.open')],
  'unknown field type in a table': () => {
    const p = payload('queue.declare', { queue: 'malformed-t', arguments: new Map() });
    // Replace the empty table with one holding a field of type Z.
    const table = Buffer.from([0, 0, 0, 3, 1, 0x61, 0x5a]);
    return [frame(1, 1, Buffer.concat([p.subarray(0, p.length - 4), table]))];
  },
  'connection method on a channel': () => [methodFrame(1, 'connection.open', { virtualHost: '/' })],
  'channel method on channel 0': () => [methodFrame(0, 'queue.declare', { queue: 'malformed-q' })],
  'publish with immediate': () => [
    methodFrame(1, 'basic.publish', { exchange: '', routingKey: 'x', immediate: true }),
    frame(2, 1, header(60, 1)),
    frame(3, 1, Buffer.from('x')),
  ],
};

/**
 * Where Redrive answers differently on purpose: RabbitMQ drops the socket without a
 * word, Redrive closes the connection with the code the spec gives, so the client learns why.
 */
const differences: Record<string, { rabbit: Answer; redrive: Answer }> = {
  'unknown method of a known class': { rabbit: { kind: 'eof' }, redrive: { kind: 'connection.close', code: 540 } },
  'unknown class': { rabbit: { kind: 'eof' }, redrive: { kind: 'connection.close', code: 540 } },
  'unknown field type in a table': { rabbit: { kind: 'eof' }, redrive: { kind: 'connection.close', code: 501 } },
};

async function outcome(port: number, bytes: Buffer[], waitMs = 1500): Promise<Answer> {
  const c = await RawClient.signedIn(port);
  try {
    for (const b of bytes) c.write(b);
    const a = await c.answer(waitMs);
    return a.code === undefined ? { kind: a.kind } : { kind: a.kind, code: a.code };
  } finally {
    c.close();
  }
}

/** A small seeded generator (mulberry32), so a failing case can be replayed. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Valid frame sequences the mutations start from. */
const valid: (() => Buffer[])[] = [
  () => [frame(1, 1, declare('fuzz-q'))],
  () => [methodFrame(1, 'exchange.declare', { exchange: 'fuzz-x', type: 'topic', arguments: new Map() })],
  () => [
    methodFrame(1, 'queue.bind', { queue: 'fuzz-q', exchange: 'amq.topic', routingKey: 'a.#', arguments: new Map() }),
  ],
  () => [
    methodFrame(1, 'basic.publish', { exchange: '', routingKey: 'fuzz-q' }),
    frame(2, 1, header(60, 5)),
    frame(3, 1, Buffer.from('hello')),
  ],
  () => [
    methodFrame(1, 'basic.qos', { prefetchCount: 5 }),
    methodFrame(1, 'basic.consume', { queue: 'fuzz-q', consumerTag: 'c', arguments: new Map() }),
  ],
  () => [
    methodFrame(1, 'basic.get', { queue: 'fuzz-q', noAck: true }),
    methodFrame(1, 'basic.ack', { deliveryTag: 1 }),
  ],
  () => [methodFrame(1, 'confirm.select'), methodFrame(1, 'channel.close', { replyCode: 200, replyText: 'bye' })],
];

function mutate(bytes: Buffer, next: () => number): Buffer {
  const b = Buffer.from(bytes);
  const at = () => Math.floor(next() * b.length);
  switch (Math.floor(next() * 5)) {
    case 0: // flip bytes
      for (let i = 0, n = 1 + Math.floor(next() * 3); i < n; i++) b[at()] = Math.floor(next() * 256);
      return b;
    case 1: // cut short
      return b.subarray(0, at());
    case 2: // insert garbage
      return Buffer.concat([
        b.subarray(0, at()),
        Buffer.from(Array.from({ length: 1 + Math.floor(next() * 8) }, () => Math.floor(next() * 256))),
        b,
      ]);
    case 3: {
      // a size field that lies
      const out = Buffer.from(b);
      out.writeUInt32BE(Math.floor(next() * 300), 3);
      return out;
    }
    default: // a payload byte set to an extreme
      b[7 + Math.floor(next() * Math.max(1, b.length - 8))] = next() < 0.5 ? 0 : 255;
      return b;
  }
}

const HARD = new Set([501, 502, 503, 504, 505, 506, 530, 540, 541]);
const SOFT = new Set([403, 404, 405, 406]);

describe('malformed AMQP frames', () => {
  const server = useAmqpServer();

  for (const [name, bytes] of Object.entries(cases)) {
    test(`${name}: the same close as RabbitMQ`, async (t) => {
      const rabbit = await rabbitOrSkip(t);
      if (!rabbit) return;
      await rabbit.close();
      const rabbitSaw = await outcome(5672, bytes());
      const got = await outcome(server().port, bytes());
      t.diagnostic(`RabbitMQ: ${JSON.stringify(rabbitSaw)}`);
      const known = differences[name];
      assert.deepEqual(rabbitSaw, known?.rabbit ?? rabbitSaw);
      assert.deepEqual(got, known?.redrive ?? rabbitSaw);
    });
  }

  test('hundreds of mutated frames: each ends in a known close, a normal reply or a wait; the server stays up', async (t) => {
    const next = random(20_240_601);
    const seen = new Map<string, number>();
    for (let i = 0; i < 300; i++) {
      const base = valid[Math.floor(next() * valid.length)]!();
      const k = Math.floor(next() * base.length);
      base[k] = mutate(base[k]!, next);
      const a = await outcome(server().port, base, 200);
      const label = a.code === undefined ? a.kind : `${a.kind} ${a.code}`;
      seen.set(label, (seen.get(label) ?? 0) + 1);
      if (a.kind === 'connection.close') assert.ok(HARD.has(a.code!), `case ${i}: connection closed with ${a.code}`);
      else if (a.kind === 'channel.close')
        assert.ok(SOFT.has(a.code!) || HARD.has(a.code!), `case ${i}: channel closed with ${a.code}`);
      else
        assert.notEqual(
          a.kind,
          'eof',
          `case ${i}: the connection ended without a close (bytes ${base.map((b) => b.toString('hex')).join(' ')})`,
        );
      if (i % 25 === 0) assert.equal(server().server.proc.exitCode, null, 'the server is still running');
    }
    t.diagnostic(JSON.stringify(Object.fromEntries(seen)));
    assert.ok((seen.get('connection.close 501') ?? 0) > 10, 'the mutations did produce frame errors');
    // Another connection works after all that.
    const c = await RawClient.signedIn(server().port);
    c.send(1, 'queue.declare', { queue: 'after-fuzz', arguments: new Map() });
    assert.equal((await c.expect('queue.declare-ok')).queue, 'after-fuzz');
    c.close();
  });
});

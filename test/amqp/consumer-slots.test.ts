/**
 * Consumer slots (src/protocols/amqp/limits.ts): a consumer takes one of its channel's,
 * its account's and the server's share of the long-poll pool, and gives it back once.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AmqpUsage, DEFAULT_AMQP_LIMITS, Holdings } from '../../src/protocols/amqp/limits.js';

const holdings = (usage: AmqpUsage) => new Holdings(usage, new Map());

test("the server's share of the long-poll pool is shared by all accounts; a slot given back twice counts once", () => {
  const usage = new AmqpUsage({ ...DEFAULT_AMQP_LIMITS, maxConsumersPerAccount: 3 }, 4);
  const h = holdings(usage);
  const a = [h.takeConsumer('A', 0), h.takeConsumer('A', 1), h.takeConsumer('A', 2)];
  assert.throws(() => h.takeConsumer('A', 3), /consumer limit in vhost '\/' \(3\) is reached/);
  const b = h.takeConsumer('B', 0);
  assert.throws(() => h.takeConsumer('C', 0), /the server's consumer limit \(4\) is reached/);
  b();
  b();
  assert.equal(usage.consumers, 3);
  h.takeConsumer('C', 0);
  for (const give of a) give();
  assert.equal(usage.consumers, 1);
});

test("a channel's consumers past consumer_max_per_channel: 530 NOT_ALLOWED, a connection error", () => {
  const h = holdings(new AmqpUsage({ ...DEFAULT_AMQP_LIMITS, maxConsumersPerChannel: 2 }));
  h.takeConsumer('A', 1);
  assert.throws(
    () => h.takeConsumer('A', 2),
    (e: { code: number; hard: boolean; replyText: string }) =>
      e.code === 530 && e.hard && e.replyText === 'NOT_ALLOWED - reached maximum (2) of consumers per channel',
  );
});

test('half-open handshakes are counted per address (IPv6 by /64)', () => {
  const usage = new AmqpUsage({ ...DEFAULT_AMQP_LIMITS, maxHandshakesPerAddress: 2 });
  const ends = [usage.startHandshake('2001:db8::1'), usage.startHandshake('2001:db8:0:0:ffff::2')];
  assert.equal(usage.mayHandshake('2001:db8::3'), false, 'the same /64');
  assert.equal(usage.mayHandshake('2001:db8:0:1::1'), true, 'another /64');
  assert.equal(usage.mayHandshake('127.0.0.1'), true);
  ends[0]!();
  assert.equal(usage.mayHandshake('2001:db8::3'), true);
  assert.equal(usage.handshakes, 1);
});

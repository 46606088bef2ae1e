/**
 * Qpid Proton (Debian's python3-qpid-proton) as the receiver, against a Redrive server
 * process: link credit and drain, and each outcome (accepted, released, rejected,
 * modified with delivery-failed, with undeliverable-here and with annotations), with
 * what the deliveries carry and where the messages end up checked over 0-9-1.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { needs } from '../support/requirements.js';
import { proton, send, useAmqp10Server, type Typed } from './support.js';

interface Carried {
  body: string;
  delivery_count: number;
  first_acquirer: boolean;
  annotations: Record<string, Typed>;
}

describe('AMQP 1.0 with Qpid Proton as the receiver', { timeout: 120_000 }, () => {
  const env = useAmqp10Server();

  const settle = async (queue: string, ...steps: string[]) =>
    (await proton(env().redrive.port, 'settle', queue, ...steps)) as Carried[];

  test('credit bounds what is sent; a drain sends what is left and uses up the credit', needs('proton'), async () => {
    const { redrive, ch, c } = env();
    await ch.assertQueue('p-credit');
    await send(
      c,
      '/queues/p-credit',
      [1, 2, 3, 4, 5].map((i) => ({ body: `c${i}` })),
    );
    const r = (await proton(redrive.port, 'credit', 'p-credit', '3')) as Record<string, number>;
    assert.deepEqual(r, { before_drain: 3, drained: 2, credit: 0 });
    assert.equal((await ch.checkQueue('p-credit')).messageCount, 0, 'all five accepted');
  });

  test('released and modified requeue, counted as RabbitMQ 4 counts; accepted deletes', needs('proton'), async () => {
    const { ch, c } = env();
    await ch.assertQueue('p-out', { arguments: { 'x-queue-type': 'quorum' } });
    await send(c, '/queues/p-out', [{ body: 'p' }]);
    const seen = await settle(
      'p-out',
      'released',
      'failed:{"x-opt-why": "busy", "x-opt-try": 2}',
      'released',
      'failed',
      'accepted',
    );
    assert.deepEqual(
      seen.map((s) => [s.body, s.delivery_count, s.first_acquirer]),
      [
        ['p', 0, true],
        ['p', 0, false],
        ['p', 1, false],
        ['p', 1, false],
        ['p', 2, false],
      ],
      'released counts no delivery; delivery-failed does; every delivery acquires',
    );
    assert.deepEqual(seen[2]!.annotations['x-opt-why'], ['str', 'busy'], 'merged by the modified outcome');
    assert.deepEqual(seen[2]!.annotations['x-opt-try'], ['int', 2]);
    assert.deepEqual(seen[4]!.annotations['x-opt-why'], ['str', 'busy'], 'and kept');
    assert.equal((await ch.checkQueue('p-out')).messageCount, 0, 'accepted: deleted');
  });

  test(
    'rejected and modified undeliverable-here dead-letter through the dead-letter exchange',
    needs('proton'),
    async () => {
      const { ch, c } = env();
      await ch.assertExchange('p-dlx', 'fanout');
      await ch.assertQueue('p-dlq');
      await ch.bindQueue('p-dlq', 'p-dlx', '');
      await ch.assertQueue('p-src', { arguments: { 'x-queue-type': 'quorum', 'x-dead-letter-exchange': 'p-dlx' } });
      await send(c, '/queues/p-src', [{ body: 'r1' }, { body: 'r2' }]);
      await settle('p-src', 'rejected', 'undeliverable:{"x-opt-category": "business"}');
      const dead = await settle('p-dlq', 'accepted', 'accepted');
      assert.deepEqual(
        dead.map((d) => [d.body, d.annotations['x-first-death-reason']?.[1], d.annotations['x-opt-category']?.[1]]),
        [
          ['r1', 'rejected', undefined],
          ['r2', 'rejected', 'business'],
        ],
      );
      assert.equal((await ch.checkQueue('p-src')).messageCount, 0);
    },
  );

  test('rejected without a dead-letter target drops the message', needs('proton'), async () => {
    const { ch, c } = env();
    await ch.assertQueue('p-drop');
    await send(c, '/queues/p-drop', [{ body: 'gone' }]);
    await settle('p-drop', 'rejected');
    assert.equal((await ch.checkQueue('p-drop')).messageCount, 0);
  });
});

/**
 * AMQP 1.0 receivers' outcomes as RabbitMQ 4 applies them, with rhea against a Redrive
 * server process: a `modified` outcome's message annotations merged into a quorum queue's
 * message (read back over 1.0 and 0-9-1, routing its dead-lettering through a headers
 * exchange), ignored by a classic queue, a reserved key ending the session; `released`
 * counted neither in the header's delivery-count nor toward a delivery limit.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { EventContext } from 'rhea';
import { close, connect, pause, receiver, send, useAmqp10Server } from './support.js';

describe('AMQP 1.0 outcomes with rhea', { timeout: 60_000 }, () => {
  const env = useAmqp10Server();

  test('modified with annotations on a quorum queue: merged for the next delivery, over 1.0 and 0-9-1', async () => {
    const { ch, c } = env();
    await ch.assertQueue('o-qq', { arguments: { 'x-queue-type': 'quorum' } });
    await send(c, '/queues/o-qq', [
      { body: 'from 1.0', message_annotations: { 'x-opt-kept': 'as sent', 'x-opt-over': 'old' } },
    ]);
    ch.sendToQueue('o-qq', Buffer.from('from 0-9-1'), { headers: { n: 1 } });
    await pause(200);
    const r = receiver(c, 'o-qq');
    r.link.add_credit(2);
    const first = await r.next(2);
    for (const got of first)
      got.delivery.modified({
        delivery_failed: true,
        message_annotations: {
          'x-opt-requeue-reason': 'busy',
          'x-opt-over': 'new',
          'x-opt-history': ['one', 'two'],
          'x-exchange': 'not kept: the broker sets it',
        },
      });
    r.link.add_credit(2);
    const again = (await r.next(4)).slice(2);
    const byBody = (body: string) => again.find((x) => bodyText(x.message.body) === body)!;
    const own = byBody('from 1.0').message;
    assert.equal(own.message_annotations?.['x-opt-requeue-reason'], 'busy');
    assert.equal(own.message_annotations?.['x-opt-over'], 'new', 'a key given replaces the one sent');
    assert.equal(own.message_annotations?.['x-opt-kept'], 'as sent');
    assert.deepEqual(own.message_annotations?.['x-opt-history'], ['one', 'two'], 'a list, kept for 1.0 receivers');
    assert.equal(own.message_annotations?.['x-exchange'], '');
    assert.equal(own.delivery_count, 1, 'delivery-failed counts');
    const converted = byBody('from 0-9-1').message;
    assert.equal(converted.message_annotations?.['x-opt-requeue-reason'], 'busy');
    assert.deepEqual(converted.application_properties, { n: 1 });
    for (const got of again) got.delivery.release();
    r.link.close();
    await pause(300);

    // Over 0-9-1 the simple values are headers; a list has no 0-9-1 form.
    const seen = [await ch.get('o-qq', { noAck: true }), await ch.get('o-qq', { noAck: true })];
    for (const m of seen) {
      assert.ok(m);
      assert.equal(m.properties.headers?.['x-opt-requeue-reason'], 'busy', m.content.toString());
      assert.equal(m.properties.headers?.['x-opt-history'], undefined);
    }
    const own091 = seen.find((m) => m && m.content.toString() === 'from 1.0');
    assert.ok(own091);
    assert.equal(own091.properties.headers?.['x-opt-over'], 'new');
  });

  test('modified undeliverable-here: the annotations route the dead letter through a headers exchange', async () => {
    const { ch, c } = env();
    await ch.assertExchange('o-dlx', 'headers');
    for (const category of ['transient', 'business']) {
      await ch.assertQueue(`o-${category}-dlq`);
      await ch.bindQueue(`o-${category}-dlq`, 'o-dlx', '', {
        'x-match': 'all-with-x',
        'x-opt-dead-letter-category': category,
      });
    }
    await ch.assertQueue('o-orders', { arguments: { 'x-queue-type': 'quorum', 'x-dead-letter-exchange': 'o-dlx' } });
    await send(c, '/queues/o-orders', [{ body: 'order 7' }]);
    const r = receiver(c, 'o-orders');
    r.link.add_credit(1);
    const [got] = await r.next(1);
    got!.delivery.modified({
      undeliverable_here: true,
      message_annotations: {
        'x-opt-dead-letter-category': 'business',
        'x-opt-dead-letter-reason': 'Customer Not Eligible for Discount',
      },
    });
    r.link.close();
    await pause(400);
    assert.equal((await ch.checkQueue('o-transient-dlq')).messageCount, 0);
    const dead = receiver(c, 'o-business-dlq', { autoaccept: true });
    dead.link.add_credit(1);
    const [d] = await dead.next(1);
    const a = d!.message.message_annotations!;
    assert.equal(bodyText(d!.message.body), 'order 7');
    assert.equal(a['x-opt-dead-letter-reason'], 'Customer Not Eligible for Discount');
    assert.equal(a['x-exchange'], 'o-dlx');
    assert.equal(a['x-first-death-reason'], 'rejected');
    dead.link.close();
  });

  test('a classic queue ignores the annotations, as RabbitMQ 4 does; the outcome still applies', async () => {
    const { ch, c } = env();
    await ch.assertQueue('o-classic');
    await send(c, '/queues/o-classic', [{ body: 'plain' }]);
    const r = receiver(c, 'o-classic');
    r.link.add_credit(1);
    const [first] = await r.next(1);
    first!.delivery.modified({ delivery_failed: true, message_annotations: { 'x-opt-note': 'dropped' } });
    r.link.add_credit(1);
    const [, second] = await r.next(2);
    assert.equal(second!.message.message_annotations?.['x-opt-note'], undefined);
    assert.equal(second!.message.delivery_count, 1);
    second!.delivery.accept();
    r.link.close();
  });

  test('a reserved annotation key ends the session; its delivery goes back unchanged', async () => {
    const { redrive, ch, c } = env();
    await ch.assertQueue('o-reserved', { arguments: { 'x-queue-type': 'quorum' } });
    await send(c, '/queues/o-reserved', [{ body: 'kept' }]);
    const other = await connect(redrive.port);
    try {
      const r = receiver(other, 'o-reserved');
      const ended = new Promise<{ condition: string }>((resolve) =>
        other.once('session_error', (ctx: EventContext) => resolve(ctx.session!.error as { condition: string })),
      );
      r.link.add_credit(1);
      const [got] = await r.next(1);
      got!.delivery.modified({ delivery_failed: true, message_annotations: { reserved: 'no' } });
      assert.equal((await ended).condition, 'amqp:invalid-field');
    } finally {
      await close(other);
    }
    await pause(300);
    const m = await ch.get('o-reserved', { noAck: true });
    assert.ok(m, 'back in its queue');
    assert.equal(m.content.toString(), 'kept');
    assert.equal(m.properties.headers?.reserved, undefined);
  });

  test('released counts neither in delivery-count nor toward the delivery limit; delivery-failed does', async () => {
    const { ch, c } = env();
    await ch.assertExchange('o-limit-dlx', 'fanout');
    await ch.assertQueue('o-limit-dlq');
    await ch.bindQueue('o-limit-dlq', 'o-limit-dlx', '');
    await ch.assertQueue('o-limit', {
      arguments: { 'x-queue-type': 'quorum', 'x-delivery-limit': 1, 'x-dead-letter-exchange': 'o-limit-dlx' },
    });
    await send(c, '/queues/o-limit', [{ body: 'limited' }]);
    const r = receiver(c, 'o-limit');
    let n = 0;
    const next = async () => {
      r.link.add_credit(1);
      return (await r.next(++n))[n - 1]!;
    };
    for (let i = 0; i < 3; i++) {
      const got = await next();
      assert.equal(got.message.delivery_count ?? 0, 0, 'releases are not counted');
      assert.equal(got.message.first_acquirer, i === 0, 'but each delivery acquires it');
      got.delivery.release();
    }
    (await next()).delivery.modified({ delivery_failed: true });
    const counted = await next();
    assert.equal(counted.message.delivery_count, 1, 'one failed delivery');
    counted.delivery.modified({}); // neither flag: as released
    const last = await next();
    assert.equal(last.message.delivery_count, 1);
    last.delivery.modified({ delivery_failed: true });
    await pause(400);
    r.link.close();
    assert.equal((await ch.checkQueue('o-limit')).messageCount, 0, 'the second failed delivery is over the limit');
    const dead = await ch.get('o-limit-dlq', { noAck: true });
    assert.ok(dead);
    const deaths = dead.properties.headers?.['x-death'] as { reason: string }[] | undefined;
    assert.equal(deaths?.[0]?.reason, 'delivery_limit');
  });
});

function bodyText(body: unknown): string {
  if (typeof body === 'string') return body;
  return Buffer.from((body as { content: Buffer }).content).toString();
}

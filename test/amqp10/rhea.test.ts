/**
 * AMQP 1.0 with rhea against a Redrive server process: the protocol header switch and
 * SASL, sending to each address form, receiving with credit, each outcome, drain, and
 * refusals (missing queue or exchange, transactions) with RabbitMQ 4's conditions.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import amqp, { type ChannelModel } from 'amqplib';
import type { Connection } from 'rhea';
import { startAmqpServer, type AmqpServer } from '../amqp/support.js';
import { attachError, close, connect, pause, receiver, send } from './support.js';

describe('AMQP 1.0 with rhea', { timeout: 60_000 }, () => {
  let redrive: AmqpServer;
  let c: Connection;
  let amqp091: ChannelModel;

  before(async () => {
    redrive = await startAmqpServer();
    amqp091 = await amqp.connect(redrive.url);
    const ch = await amqp091.createChannel();
    for (const q of ['q-basic', 'q-out', 'q-drain', 'q-direct', 'q-to', 'q-settled', 'q-multi'])
      await ch.assertQueue(q);
    await ch.assertExchange('x-direct', 'direct');
    await ch.bindQueue('q-direct', 'x-direct', 'rk');
    await ch.close();
    c = await connect(redrive.port);
  });
  after(async () => {
    await close(c).catch(() => undefined);
    await amqp091?.close().catch(() => undefined);
    await redrive?.server.stop();
    redrive?.server.cleanup();
  });

  test('a message sent to /queues/:queue is accepted and received with its body and properties', async () => {
    const outcomes = await send(c, '/queues/q-basic', [
      {
        body: 'hello',
        message_id: 'm-1',
        subject: 'greeting',
        content_type: 'text/plain',
        application_properties: { colour: 'blue', n: 7 },
        durable: true,
      },
    ]);
    assert.deepEqual(outcomes, [{ outcome: 'accepted' }]);
    const r = receiver(c, 'q-basic');
    r.link.add_credit(1);
    const [got] = await r.next(1);
    assert.equal(got!.message.body, 'hello');
    assert.equal(got!.message.message_id, 'm-1');
    assert.equal(got!.message.subject, 'greeting');
    assert.equal(got!.message.content_type, 'text/plain');
    assert.deepEqual(got!.message.application_properties, { colour: 'blue', n: 7 });
    assert.equal(got!.message.durable, true);
    assert.equal(got!.message.first_acquirer, true);
    assert.equal(got!.message.message_annotations?.['x-routing-key'], 'q-basic');
    assert.equal(got!.message.message_annotations?.['x-exchange'], '');
    got!.delivery.accept();
    r.link.close();
  });

  test('the same message is consumed over 0-9-1 with converted properties', async () => {
    await send(c, '/queues/q-basic', [{ body: 'to 0-9-1', message_id: 'm-2', application_properties: { k: 'v' } }]);
    const ch = await amqp091.createChannel();
    const m = await ch.get('q-basic', { noAck: true });
    assert.ok(m);
    assert.equal(m.content.toString(), 'to 0-9-1');
    assert.equal(m.properties.messageId, 'm-2');
    assert.equal(m.properties.headers?.k, 'v');
    await ch.close();
  });

  test('sending to /exchanges/:exchange/:key routes; to a key with no binding the message is released', async () => {
    const outcomes = await send(c, '/exchanges/x-direct/rk', [{ body: 'routed' }]);
    assert.deepEqual(outcomes, [{ outcome: 'accepted' }]);
    const unrouted = await send(c, '/exchanges/x-direct/nowhere', [{ body: 'lost' }]);
    assert.deepEqual(unrouted, [{ outcome: 'released' }]);
    const viaSubject = await send(c, '/exchanges/x-direct', [{ body: 'by subject', subject: 'rk' }]);
    assert.deepEqual(viaSubject, [{ outcome: 'accepted' }]);
    const r = receiver(c, 'q-direct');
    r.link.add_credit(5);
    const got = await r.next(2);
    assert.deepEqual(
      got.map((g) => g.message.body),
      ['routed', 'by subject'],
    );
    for (const g of got) g.delivery.accept();
    r.link.close();
  });

  test('the null target sends each message to its `to` address', async () => {
    const outcomes = await send(c, null, [{ body: 'via to', to: '/queues/q-to' }, { body: 'no to' }]);
    assert.equal(outcomes[0]!.outcome, 'accepted');
    assert.equal(outcomes[1]!.outcome, 'rejected');
    const r = receiver(c, 'q-to');
    r.link.add_credit(1);
    const [got] = await r.next(1);
    assert.equal(got!.message.body, 'via to');
    got!.delivery.accept();
    r.link.close();
  });

  test('attaching to a missing queue or exchange fails with amqp:not-found', async () => {
    const q = await attachError(c, 'receiver', '/queues/no-such-queue');
    assert.equal(q?.condition, 'amqp:not-found');
    assert.match(q!.description, /no queue 'no-such-queue' in vhost '\/'/);
    const x = await attachError(c, 'sender', '/exchanges/no-such-exchange/k');
    assert.equal(x?.condition, 'amqp:not-found');
    assert.match(x!.description, /no exchange 'no-such-exchange' in vhost '\/'/);
    const bad = await attachError(c, 'sender', '/topics/x');
    assert.equal(bad?.condition, 'amqp:invalid-field');
  });

  test('outcomes: released and modified requeue, accepted deletes, rejected drops without a dead-letter target', async () => {
    await send(c, '/queues/q-out', [{ body: 'a' }]);
    const r = receiver(c, 'q-out');
    r.link.add_credit(1);
    const [first] = await r.next(1);
    assert.equal(first!.message.delivery_count ?? 0, 0);
    first!.delivery.release();
    r.link.add_credit(1);
    const [, second] = await r.next(2);
    assert.equal(second!.message.body, 'a');
    assert.equal(second!.message.delivery_count ?? 0, 0, 'a release is not counted');
    second!.delivery.modified({ delivery_failed: true });
    r.link.add_credit(1);
    const [, , third] = await r.next(3);
    assert.equal(third!.message.first_acquirer, false);
    assert.equal(third!.message.delivery_count, 1, 'a failed delivery is counted');
    third!.delivery.reject({ condition: 'app:bad', description: 'no' });
    await pause(300);
    const ch = await amqp091.createChannel();
    assert.equal((await ch.checkQueue('q-out')).messageCount, 0, 'rejected without a dead-letter target: dropped');
    await ch.close();
    r.link.close();
  });

  test('credit limits what is sent; drain uses up the rest and says so', async () => {
    await send(
      c,
      '/queues/q-drain',
      [1, 2, 3].map((i) => ({ body: `d${i}` })),
    );
    const r = receiver(c, 'q-drain', { autoaccept: true });
    r.link.add_credit(2);
    await r.next(2);
    await pause(300);
    assert.equal(r.got.length, 2, 'no more than the credit');
    const drained = new Promise<void>((resolve) => r.link.once('receiver_drained', () => resolve()));
    r.link.drain = true;
    r.link.add_credit(5);
    await drained;
    assert.equal(r.got.length, 3);
    assert.equal((r.link as unknown as { credit: number }).credit, 0);
    r.link.close();
  });

  test('the largest credit (2^32 - 1) is credit, not a negative number', async () => {
    await send(c, '/queues/q-drain', [{ body: 'big credit' }]);
    const r = receiver(c, 'q-drain', { autoaccept: true });
    r.link.add_credit(2 ** 32 - 1);
    const [got] = await r.next(1);
    assert.equal(got!.message.body, 'big credit');
    r.link.close();
  });

  test('at-most-once: settled deliveries are gone once sent', async () => {
    await send(c, '/queues/q-settled', [{ body: 's' }]);
    const r = receiver(c, 'q-settled', { snd_settle_mode: 1 } as never);
    r.link.add_credit(1);
    const [got] = await r.next(1);
    assert.equal(got!.message.body, 's');
    await pause(300);
    const ch = await amqp091.createChannel();
    const q = await ch.checkQueue('q-settled');
    assert.equal(q.messageCount, 0);
    await ch.close();
    r.link.close();
  });

  test('a message larger than a frame goes in several transfers both ways', async () => {
    const big = Buffer.alloc(300_000, 'x').toString();
    const outcomes = await send(c, '/queues/q-multi', [{ body: big }]);
    assert.deepEqual(outcomes, [{ outcome: 'accepted' }]);
    const r = receiver(c, 'q-multi', { autoaccept: true });
    r.link.add_credit(1);
    const [got] = await r.next(1);
    assert.equal(got!.message.body, big);
    r.link.close();
  });

  test('the management API lists a 1.0 connection and its receiving link, and closes it; /metrics counts them', async () => {
    const other = await connect(redrive.port);
    const r = receiver(other, 'q-basic');
    r.link.add_credit(3);
    await pause(200);
    const api = (path: string, init: RequestInit = {}) =>
      fetch(`${redrive.server.url}/api/${path}`, {
        ...init,
        headers: { authorization: `Basic ${Buffer.from('guest:guest').toString('base64')}`, ...init.headers },
      });
    const list = (await (await api('connections')).json()) as { name: string; protocol: string; user: string }[];
    const mine = list.filter((x) => x.protocol === 'AMQP 1-0');
    assert.ok(mine.length >= 2, 'both rhea connections are listed');
    assert.equal(mine[0]!.user, 'guest');
    const consumers = (await (await api('consumers')).json()) as { queue: { name: string }; prefetch_count: number }[];
    assert.ok(
      consumers.some((x) => x.queue.name === 'q-basic' && x.prefetch_count === 3),
      'the link, with its credit',
    );
    const metrics = await (await fetch(`${redrive.server.url}/metrics`)).text();
    assert.match(metrics, /redrive_amqp_connections\{node="[^"]+",protocol="1\.0"\} [2-9]/);
    assert.match(metrics, /redrive_amqp_connections\{node="[^"]+",protocol="0-9-1"\} 1/);
    assert.match(metrics, /redrive_amqp_links\{node="[^"]+"\} [1-9]/);
    const closed = new Promise<string | undefined>((resolve) =>
      other.once('connection_error', (ctx) => resolve((ctx.connection.error as { condition?: string })?.condition)),
    );
    const last = mine[mine.length - 1]!;
    const del = await api(`connections/${encodeURIComponent(last.name)}`, { method: 'DELETE' });
    assert.equal(del.status, 204);
    assert.equal(await closed, 'amqp:connection:forced');
  });

  test('a wrong password is refused at SASL; a client without SASL gets the SASL header', async () => {
    await assert.rejects(connect(redrive.port, { password: 'wrong' }));
    const net = await import('node:net');
    const answer = await new Promise<Buffer>((resolve) => {
      const s = net.connect(redrive.port, '127.0.0.1', () => s.write(Buffer.from('AMQP\x00\x01\x00\x00', 'latin1')));
      const chunks: Buffer[] = [];
      s.on('data', (d) => chunks.push(d));
      s.on('close', () => resolve(Buffer.concat(chunks)));
    });
    assert.deepEqual(answer, Buffer.from('AMQP\x03\x01\x00\x00', 'latin1'));
  });
});

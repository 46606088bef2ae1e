/**
 * What RabbitMQ clients rely on beyond the happy path, against a
 * real server process with amqplib, pika and raw frames: a close while publishes are
 * still queued resolves, update-secret, publisher confirms in runs with multiple=true,
 * and the capabilities connection.start announces.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';
import amqp from 'amqplib';
import { field } from '../../src/protocols/amqp/codec.js';
import { PROTOCOL_HEADER } from '../../src/protocols/amqp/frames.js';
import { publishFrames, RawClient } from './raw-client.js';
import { pause, startAmqpServer, useAmqpServer } from './support.js';
import { needs } from '../support/requirements.js';

/** `promise`, or a failure after `ms` (a hang is the bug these tests look for). */
const within = <T>(promise: Promise<T>, ms: number, what: string) =>
  Promise.race([promise, pause(ms).then(() => assert.fail(`${what} did not settle within ${ms} ms`))]);

/** Confirms received until `last` is covered: each as [kind, tag, multiple]. */
async function confirms(c: RawClient, last: number): Promise<[string, number, boolean][]> {
  const out: [string, number, boolean][] = [];
  while (!out.length || out.at(-1)![1] < last) {
    const a = await c.answer(10_000);
    assert.ok(a.kind === 'basic.ack' || a.kind === 'basic.nack', `expected a confirm, got ${a.kind} ${a.text ?? ''}`);
    out.push([a.kind, Number(a.args!.deliveryTag), Boolean(a.args!.multiple)]);
  }
  return out;
}

describe('RabbitMQ client semantics', () => {
  const server = useAmqpServer();

  // Bodies big enough that amqplib's writer still holds some when it sends the close.
  for (const [count, size] of [
    [1, 512 << 10],
    [2, 512 << 10],
    [100, 16 << 10],
    [2000, 16],
  ] as const) {
    test(`amqplib: ${count} publishes then conn.close() resolves (close-ok, then the server reads and drops the rest)`, async () => {
      const conn = await amqp.connect(server().url);
      const ch = await conn.createChannel();
      await ch.assertQueue('close-after-publish');
      for (let i = 0; i < count; i++) ch.sendToQueue('close-after-publish', Buffer.alloc(size, i % 256));
      await within(conn.close(), 10_000, 'conn.close()');
    });
  }

  test('amqplib: 2000 publishes then ch.close() resolves, and the connection goes on', async () => {
    const conn = await amqp.connect(server().url);
    const ch = await conn.createChannel();
    await ch.assertQueue('close-channel-after-publish');
    await ch.purgeQueue('close-channel-after-publish');
    for (let i = 0; i < 2000; i++) ch.sendToQueue('close-channel-after-publish', Buffer.from(`m${i}`));
    await within(ch.close(), 10_000, 'ch.close()');
    const other = await conn.createChannel();
    // A channel's close comes after its own publishes: all of them were stored.
    assert.equal((await other.checkQueue('close-channel-after-publish')).messageCount, 2000);
    await within(conn.close(), 10_000, 'conn.close()');
  });

  test('a server-side close with publishes queued: the client gets it and its close-ok ends the connection', async () => {
    const conn = await amqp.connect(server().url);
    const ch = await conn.createChannel();
    const closed = new Promise<Error | undefined>((resolve) => conn.once('close', resolve));
    conn.on('error', () => undefined);
    ch.on('error', () => undefined);
    for (let i = 0; i < 500; i++) ch.sendToQueue('close-server-side', Buffer.from(`m${i}`));
    // A connection method on a channel: 503 COMMAND_INVALID closes the connection.
    (conn as unknown as { connection: { sendMethod(ch: number, m: number, f: object): void } }).connection.sendMethod(
      (ch as unknown as { ch: number }).ch,
      0x000a0028,
      { virtualHost: '/', capabilities: '', insist: false },
    );
    const err = await within(closed, 10_000, "the connection's close");
    assert.match(String(err), /503|COMMAND_INVALID/);
  });

  test('raw frames after close-ok are read and dropped: no reset, and the server closes when the peer does', async () => {
    const c = await RawClient.signedIn(server().port);
    c.send(0, 'connection.close', { replyCode: 200, replyText: 'bye', classId: 0, methodId: 0 });
    const burst = Buffer.concat(Array.from({ length: 200 }, (_, i) => publishFrames(1, 'close-raw', `late ${i}`)));
    c.write(burst);
    assert.equal((await c.answer()).kind, 'connection.close-ok');
    c.write(burst);
    // The server sends nothing more and keeps the socket until the client closes it.
    assert.equal((await c.answer(500)).kind, 'timeout');
    c.close();
  });

  test('pika: publishes then close', needs('pika'), async () => {
    const script = [
      'import pika, sys',
      'conn = pika.BlockingConnection(pika.URLParameters(sys.argv[1]))',
      'ch = conn.channel()',
      "ch.queue_declare(queue='close-pika')",
      "for i in range(500): ch.basic_publish(exchange='', routing_key='close-pika', body=b'm%d' % i)",
      'conn.close()',
      "print('closed')",
    ].join('\n');
    const { stdout } = await promisify(execFile)(
      process.env.REDRIVE_TEST_PYTHON ?? '/usr/bin/python3',
      ['-c', script, server().url],
      { timeout: 20_000 },
    );
    assert.equal(stdout.trim(), 'closed');
  });

  test('connection.update-secret is answered with update-secret-ok (amqplib updateSecret)', async () => {
    const conn = await amqp.connect(server().url);
    await within(conn.updateSecret(Buffer.from('a-new-token'), 'token refreshed'), 5000, 'updateSecret');
    const ch = await conn.createChannel();
    await ch.assertQueue('after-update-secret');
    await conn.close();
  });

  test('publisher confirms come in runs: one basic.ack with multiple=true per stored run, in order', async () => {
    const c = await RawClient.signedIn(server().port);
    c.send(1, 'queue.declare', { queue: 'confirm-runs', arguments: new Map() });
    await c.expect('queue.declare-ok');
    c.send(1, 'confirm.select');
    await c.expect('confirm.select-ok');
    const n = 1000;
    c.write(Buffer.concat(Array.from({ length: n }, (_, i) => publishFrames(1, 'confirm-runs', `m${i}`))));
    const got = await confirms(c, n);
    assert.ok(got.every(([kind]) => kind === 'basic.ack'));
    assert.ok(
      got.some(([, , multiple]) => multiple),
      'at least one ack covers a run',
    );
    assert.ok(got.length < n / 2, `${got.length} acks for ${n} publishes`);
    const tags = got.map(([, tag]) => tag);
    assert.deepEqual(
      tags,
      [...tags].sort((a, b) => a - b),
      'in order',
    );
    c.close();
  });

  test('a nack breaks a run: stored messages before and after it are acked around it', async () => {
    const c = await RawClient.signedIn(server().port);
    const args = new Map([
      ['x-max-length', field.long(1)],
      ['x-overflow', field.str('reject-publish')],
    ]);
    c.send(1, 'queue.declare', { queue: 'confirm-full', arguments: args });
    const declared = await c.answer();
    assert.equal(declared.kind, 'queue.declare-ok', JSON.stringify(declared));
    c.send(1, 'queue.declare', { queue: 'confirm-open', arguments: new Map() });
    await c.expect('queue.declare-ok');
    c.send(1, 'confirm.select');
    await c.expect('confirm.select-ok');
    // open, open, full (stored: the first), full (refused), open, open
    const order = ['confirm-open', 'confirm-open', 'confirm-full', 'confirm-full', 'confirm-open', 'confirm-open'];
    c.write(Buffer.concat(order.map((q, i) => publishFrames(1, q, `m${i}`))));
    const got = await confirms(c, 6);
    // Each tag is confirmed once, the refused one with a nack, never inside an ack's run.
    const acked = new Set<number>();
    let upTo = 0;
    for (const [kind, tag, multiple] of got) {
      const covered = multiple ? Array.from({ length: tag - upTo }, (_, k) => upTo + k + 1) : [tag];
      for (const t of covered) {
        assert.ok(!acked.has(t), `tag ${t} confirmed twice`);
        acked.add(t);
        assert.equal(kind === 'basic.nack', t === 4, `tag ${t}: ${kind}`);
      }
      upTo = tag;
    }
    assert.deepEqual([...acked].sort(), [1, 2, 3, 4, 5, 6]);
    c.close();
  });

  test("connection.start's capabilities: RabbitMQ 3.13's list, less what Redrive does not do", async () => {
    const c = await RawClient.open(server().port);
    c.write(PROTOCOL_HEADER);
    const start = await c.expect('connection.start');
    const props = start.serverProperties as Map<string, { value: unknown }>;
    const caps = props.get('capabilities')!.value as Map<string, { value: unknown }>;
    const on = [...caps]
      .filter(([, v]) => v.value === true)
      .map(([k]) => k)
      .sort();
    assert.deepEqual(on, [
      'authentication_failure_close',
      'basic.nack',
      'connection.blocked',
      'consumer_cancel_notify',
      'direct_reply_to',
      'exchange_exchange_bindings',
      'per_consumer_qos',
      'publisher_confirms',
    ]);
    c.close();
  });

  test('connection.blocked and unblocked: publishers are blocked while too much waits to be stored, then unblocked; nothing is lost', async () => {
    const s = await startAmqpServer({ args: ['--amqp-max-queued-bytes-total', String(1 << 20)] });
    try {
      const conn = await amqp.connect(s.url);
      const events: string[] = [];
      conn.on('blocked', (reason: string) => events.push(`blocked: ${reason}`));
      conn.on('unblocked', () => events.push('unblocked'));
      const ch = await conn.createConfirmChannel();
      await ch.assertQueue('blocked-q');
      for (let i = 0; i < 40; i++) ch.sendToQueue('blocked-q', Buffer.alloc(256 << 10, i));
      await within(ch.waitForConfirms(), 30_000, 'the confirms');
      for (let i = 0; i < 100 && events.at(-1) !== 'unblocked'; i++) await pause(50);
      assert.deepEqual(events.slice(0, 2), ['blocked: low on memory', 'unblocked']);
      assert.equal(events.at(-1), 'unblocked');
      assert.equal((await ch.checkQueue('blocked-q')).messageCount, 40);
      await conn.close();
    } finally {
      await s.server.stop();
      s.server.cleanup();
    }
  });
});

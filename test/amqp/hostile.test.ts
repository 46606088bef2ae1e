/**
 * Hostile peers on the AMQP port (docs/security.md), against a real server process
 * with small limits: junk instead of the protocol header, half-finished handshakes,
 * unfinished publishes, channel and connection floods. Each flood is bounded; after each,
 * a well-behaved amqplib client is still served, the server's memory stays bounded and
 * the process is alive.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { ListQueuesCommand, SQSClient, type SQSServiceException } from '@aws-sdk/client-sqs';
import amqp from 'amqplib';
import { Agent as HttpAgent } from 'node:http';
import { Writer } from '../../src/protocols/amqp/codec.js';
import { methodFrame, PROTOCOL_HEADER } from '../../src/protocols/amqp/frames.js';
import { RawClient } from './raw-client.js';
import { pause, startAmqpServer, type AmqpServer } from './support.js';

const MiB = 1 << 20;

/** The server process's resident memory, in bytes. */
const rss = (s: AmqpServer) =>
  Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${s.server.proc.pid}/status`, 'utf8'))![1]) * 1024;

/** A raw socket that keeps its writing side open when the server ends its own. */
async function rawSocket(port: number): Promise<Socket> {
  const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
  socket.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  return socket;
}

/** Whether the server ended or dropped the socket within `ms`. */
const closed = (socket: Socket, ms: number) =>
  new Promise<boolean>((resolve) => {
    if (socket.destroyed || socket.readableEnded) return resolve(true);
    const t = setTimeout(() => resolve(false), ms);
    const done = () => (clearTimeout(t), resolve(true));
    socket.once('close', done).once('end', done);
    socket.resume();
  });

/** A well-behaved client: connect, declare, publish with a confirm, get it back, close. */
async function served(s: AmqpServer, queue = 'hostile-canary'): Promise<void> {
  const conn = await amqp.connect(s.url);
  const ch = await conn.createConfirmChannel();
  await ch.assertQueue(queue);
  ch.sendToQueue(queue, Buffer.from('still here'));
  await ch.waitForConfirms();
  const m = await ch.get(queue, { noAck: true });
  assert.ok(m, 'the message came back');
  assert.equal(m.content.toString(), 'still here');
  await conn.close();
}

/** A content header frame of class 60 announcing `size` bytes, no properties. */
function contentHeader(channel: number, size: number): Buffer {
  const w = new Writer();
  w.short(60).short(0).longlong(size).short(0);
  const p = w.result();
  const out = Buffer.alloc(p.length + 8);
  out[0] = 2;
  out.writeUInt16BE(channel, 1);
  out.writeUInt32BE(p.length, 3);
  p.copy(out, 7);
  out[p.length + 7] = 0xce;
  return out;
}

/** Body frames of `size` bytes in total, cut to frames of 128 KiB. */
function bodyFrames(channel: number, size: number): Buffer[] {
  const frames: Buffer[] = [];
  const max = 131_072 - 8;
  for (let at = 0; at < size; at += max) {
    const n = Math.min(max, size - at);
    const f = Buffer.alloc(n + 8);
    f[0] = 3;
    f.writeUInt16BE(channel, 1);
    f.writeUInt32BE(n, 3);
    f[n + 7] = 0xce;
    frames.push(f);
  }
  return frames;
}

type Answer = Awaited<ReturnType<RawClient['answer']>>;

/**
 * Leaves a 1 MiB publish 0.9 MiB done on each of `channels` new channels (from 2 up),
 * as the attacker did; stops at the first answer that is not channel.open-ok.
 */
async function unfinishedPublishes(c: RawClient, channels: number): Promise<Answer | undefined> {
  for (let n = 2; n < 2 + channels; n++) {
    c.send(n, 'channel.open');
    const opened = await c.answer();
    if (opened.kind !== 'channel.open-ok') return opened;
    c.write(methodFrame(n, 'basic.publish', { exchange: '', routingKey: 'hostile-nowhere' }));
    c.write(contentHeader(n, MiB));
    for (const f of bodyFrames(n, Math.floor(0.9 * MiB))) c.write(f);
  }
  return undefined;
}

describe('hostile AMQP peers', () => {
  let s: AmqpServer;
  before(async () => {
    s = await startAmqpServer({
      args: [
        '--amqp-handshake-timeout',
        '1',
        '--amqp-max-handshakes',
        '100',
        '--amqp-channel-max',
        '64',
        '--amqp-max-connections-per-user',
        '6',
        '--amqp-max-unfinished-bytes',
        String(8 * MiB),
        '--amqp-max-unfinished-bytes-total',
        String(12 * MiB),
        '--amqp-max-unacked',
        '10',
      ],
    });
  });
  after(async () => {
    await s.server.stop();
    s.server.cleanup();
  });

  test('an HTTP request instead of the protocol header: answered with the AMQP header, then the socket is dropped, whatever follows', async () => {
    const before = rss(s);
    const socket = await rawSocket(s.port);
    const answer = new Promise<Buffer>((resolve) => socket.once('data', resolve));
    socket.write('GET / HTTP/1.1\r\n');
    assert.deepEqual(await answer, PROTOCOL_HEADER, "RabbitMQ's answer: the protocol it speaks");
    // Keep streaming, as the attacker did: the server reads none of it.
    const chunk = Buffer.alloc(MiB, 0x41);
    let sent = 0;
    while (!socket.destroyed && sent < 64 * MiB) {
      if (!socket.write(chunk)) await Promise.race([new Promise((r) => socket.once('drain', r)), closed(socket, 2000)]);
      sent += MiB;
    }
    assert.ok(await closed(socket, 5000), `the server dropped the socket (${sent / MiB} MiB written before)`);
    assert.ok(rss(s) - before < 32 * MiB, `the server's memory grew by ${((rss(s) - before) / MiB).toFixed(0)} MiB`);
    await served(s);
  });

  test('sockets that send the protocol header and nothing more are dropped after the handshake timeout', async () => {
    const sockets = await Promise.all(Array.from({ length: 50 }, () => rawSocket(s.port)));
    for (const socket of sockets) socket.write(PROTOCOL_HEADER);
    // Meanwhile, others are served.
    await served(s);
    const started = Date.now();
    const ends = await Promise.all(sockets.map((socket) => closed(socket, 8000)));
    assert.equal(ends.filter(Boolean).length, sockets.length, 'every half-open handshake was dropped');
    assert.ok(Date.now() - started < 8000);
    await served(s);
  });

  test('more sockets in their handshake than allowed: the extra ones are closed at once; the server recovers after the timeout', async () => {
    const sockets = await Promise.all(Array.from({ length: 140 }, () => rawSocket(s.port)));
    await pause(300);
    const dropped = sockets.filter((socket) => socket.destroyed || socket.readableEnded).length;
    assert.ok(dropped >= 40, `${dropped} of 140 sockets were closed on accept (100 may wait)`);
    assert.ok(
      (await Promise.all(sockets.map((socket) => closed(socket, 8000)))).every(Boolean),
      'all are gone after the timeout',
    );
    await served(s);
  });

  test('a handshake that sends more than 64 KiB before signing in is dropped', async () => {
    const socket = await rawSocket(s.port);
    socket.write(PROTOCOL_HEADER);
    // A start-ok frame announcing 1 MiB: before tune, frames are at most 4096 bytes.
    const head = Buffer.alloc(7);
    head[0] = 1;
    head.writeUInt32BE(MiB, 3);
    socket.write(head);
    for (let i = 0; i < 16 && !socket.destroyed; i++) socket.write(Buffer.alloc(64 * 1024));
    assert.ok(await closed(socket, 5000));
  });

  test('unfinished publishes over the connection limit: connection.close 506 RESOURCE_ERROR, others served', async () => {
    const before = rss(s);
    const c = await RawClient.signedIn(s.port);
    try {
      const answer = (await unfinishedPublishes(c, 20)) ?? (await c.answer());
      assert.deepEqual([answer.kind, answer.code], ['connection.close', 506], JSON.stringify(answer));
      c.send(0, 'connection.close-ok');
    } finally {
      c.close();
    }
    assert.ok(rss(s) - before < 64 * MiB, `the server's memory grew by ${((rss(s) - before) / MiB).toFixed(0)} MiB`);
    await served(s);
  });

  test('unfinished publishes over the server limit, spread over connections: 506 for the one past it', async () => {
    const a = await RawClient.signedIn(s.port);
    const b = await RawClient.signedIn(s.port);
    try {
      // 7 x 0.9 MiB on each: each under its own 8 MiB, together over the server's 12.
      assert.equal(await unfinishedPublishes(a, 7), undefined);
      await pause(300);
      const answer = (await unfinishedPublishes(b, 7)) ?? (await b.answer());
      assert.deepEqual([answer.kind, answer.code], ['connection.close', 506], JSON.stringify(answer));
      assert.match(answer.text ?? '', /on the server/);
      // The first connection is unharmed: it finishes a message and goes on.
      for (const f of bodyFrames(2, MiB - Math.floor(0.9 * MiB))) a.write(f);
      a.send(1, 'queue.declare', { queue: 'hostile-still', arguments: new Map() });
      assert.equal((await a.answer()).kind, 'queue.declare-ok');
    } finally {
      a.close();
      b.close();
    }
    await served(s);
  });

  test('channel_max is proposed in tune and a channel above it closes the connection with 530', async () => {
    const c = await RawClient.open(s.port);
    c.write(PROTOCOL_HEADER);
    await c.expect('connection.start');
    c.send(0, 'connection.start-ok', {
      clientProperties: new Map(),
      mechanism: 'PLAIN',
      response: Buffer.from('\0guest\0guest'),
      locale: 'en_US',
    });
    const tune = await c.expect('connection.tune');
    assert.equal(tune.channelMax, 64);
    c.send(0, 'connection.tune-ok', { channelMax: 0, frameMax: 131072, heartbeat: 0 });
    c.send(0, 'connection.open', { virtualHost: '/' });
    await c.expect('connection.open-ok');
    c.send(64, 'channel.open');
    await c.expect('channel.open-ok');
    c.send(65, 'channel.open');
    const answer = await c.answer();
    assert.deepEqual([answer.kind, answer.code], ['connection.close', 530]);
    c.close();
  });

  test('connections per user: the one past the limit is refused with 530 NOT_ALLOWED, the others keep working', async () => {
    const conns = await Promise.all(Array.from({ length: 6 }, () => amqp.connect(s.url)));
    try {
      // amqplib does not show the reply of a close during the handshake; the raw client does.
      const refused = await amqp.connect(s.url).then(
        async (c) => (await c.close(), 'connected'),
        (e: Error) => e.message,
      );
      assert.match(refused, /Expected ConnectionOpenOk; got <ConnectionClose/);
      const raw = await RawClient.signedIn(s.port).then(
        () => assert.fail('signed in'),
        (e: Error) => e.message,
      );
      assert.match(
        raw,
        /expected connection.open-ok, got connection.close 530 NOT_ALLOWED - Connection refused for user 'guest': user connection limit \(6\) is reached/,
      );
      const ch = await conns[0]!.createChannel();
      await ch.assertQueue('hostile-per-user');
    } finally {
      await Promise.all(conns.map((c) => c.close()));
    }
    // Their slots are given back when they close.
    await served(s);
    assert.match(s.server.output(), /user connection limit \(6\) is reached/);
  });

  test('unacknowledged deliveries are bounded per connection: consumers wait for acks, basic.get is refused past it', async () => {
    const conn = await amqp.connect(s.url);
    const ch = await conn.createChannel();
    await ch.assertQueue('hostile-unacked');
    await ch.purgeQueue('hostile-unacked');
    for (let i = 0; i < 30; i++) ch.sendToQueue('hostile-unacked', Buffer.from(`m${i}`));
    const got: amqp.ConsumeMessage[] = [];
    await ch.consume('hostile-unacked', (m) => m && got.push(m));
    await pause(1000);
    assert.equal(got.length, 10, 'no more than the limit is delivered unacknowledged');
    ch.ack(got[9]!, true);
    for (let i = 0; i < 50 && got.length < 20; i++) await pause(50);
    assert.equal(got.length, 20, 'acks make room for more');
    const other = await conn.createChannel();
    const closedWith = new Promise<Error>((resolve) => other.once('error', resolve));
    await other.get('hostile-unacked').catch(() => undefined);
    assert.match((await closedWith).message, /406|PRECONDITION_FAILED/);
    ch.ackAll();
    await conn.close();
  });

  test('after the floods the process is alive and its memory bounded', async () => {
    assert.equal(s.server.proc.exitCode, null);
    assert.ok(rss(s) < 400 * MiB, `RSS ${(rss(s) / MiB).toFixed(0)} MiB`);
    await served(s);
  });
});

/** The address the login-guessing tests guess from (any 127/8 address reaches loopback). */
const GUESSER = '127.0.0.2';

describe('AMQP login guessing', () => {
  let s: AmqpServer;
  const keys = { AKIDALICE: 'alice-secret', AKIDBOB: 'bob-secret' };
  const url = (user: string, password: string) => `amqp://${user}:${password}@127.0.0.1:${s.port}`;
  /**
   * A sign-in from 127.0.0.2: the guessing address. The test's clock hook comes from
   * 127.0.0.1, which the throttle must leave alone.
   */
  const attempt = (user: string, password: string, from = GUESSER) =>
    amqp.connect(url(user, password), { localAddress: from } as Record<string, unknown>).then(
      async (c) => (await c.close(), 'connected'),
      (e: Error) => e.message,
    );
  before(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'redrive-amqp-throttle-'));
    const file = join(dir, 'keys.json');
    writeFileSync(
      file,
      JSON.stringify(
        Object.fromEntries(
          Object.entries(keys).map(([k, secret]) => [k, { secretAccessKey: secret, accountId: '111122223333' }]),
        ),
      ),
    );
    s = await startAmqpServer({ args: ['--credentials', file, '--amqp-max-connections', '3'], manualClock: true });
  });
  after(async () => {
    await s.server.stop();
    s.server.cleanup();
  });

  test('failed logins are throttled: past ten in a row from an address even the right password is refused at once, the refusals are logged, and time forgives', async () => {
    for (let i = 0; i < 12; i++) assert.match(await attempt('AKIDALICE', `guess-${i}`), /403|ACCESS_REFUSED/);
    const started = Date.now();
    assert.match(await attempt('AKIDALICE', keys.AKIDALICE), /403|ACCESS_REFUSED/, 'guessing is throttled');
    assert.ok(Date.now() - started < 2000, 'refused at once, not after a wait');
    assert.match(
      await attempt('AKIDBOB', keys.AKIDBOB),
      /403|ACCESS_REFUSED/,
      'the guessing address waits for any key',
    );
    const log = s.server.output();
    assert.match(log, /AMQP PLAIN login refused: user 'AKIDALICE' - invalid credentials/);
    assert.match(log, /AMQP PLAIN login refused: user 'AKIDALICE' - too many failed logins/);
    assert.equal(await attempt('AKIDBOB', keys.AKIDBOB, '127.0.0.3'), 'connected', 'other addresses are served');
    await s.server.advanceClock(61_000);
    assert.equal(await attempt('AKIDALICE', keys.AKIDALICE), 'connected');
    assert.equal(await attempt('AKIDBOB', keys.AKIDBOB), 'connected');
  });

  test('guesses over SigV4 and over AMQP count together: failed signed requests throttle the AMQP sign-in of the same key', async () => {
    await s.server.advanceClock(16 * 60_000); // the earlier tests' failures are forgotten
    const guesser = new SQSClient({
      endpoint: s.server.url,
      region: 'us-east-1',
      credentials: { accessKeyId: 'AKIDBOB', secretAccessKey: 'not-bobs-secret' },
      maxAttempts: 1,
      requestHandler: { httpAgent: new HttpAgent({ localAddress: GUESSER }) },
    });
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) {
      await guesser.send(new ListQueuesCommand({})).then(
        () => statuses.push(200),
        (e: SQSServiceException) => statuses.push(e.$metadata.httpStatusCode ?? 0),
      );
    }
    assert.ok(!statuses.includes(200) && statuses.includes(429), `refused, then throttled: ${statuses}`);
    assert.match(await attempt('AKIDBOB', keys.AKIDBOB), /403|ACCESS_REFUSED/, 'AMQP waits too');
    await s.server.advanceClock(61_000);
    assert.equal(await attempt('AKIDBOB', keys.AKIDBOB), 'connected');
    guesser.destroy();
  });

  test('failed logins are throttled per client address, whatever the user name', async () => {
    await s.server.advanceClock(16 * 60_000);
    for (let i = 0; i < 35; i++) await attempt(`AKIDNOBODY${i}`, 'x');
    assert.match(await attempt('AKIDBOB', keys.AKIDBOB), /403|ACCESS_REFUSED/, 'the address is throttled');
    await s.server.advanceClock(61_000);
    assert.equal(await attempt('AKIDBOB', keys.AKIDBOB), 'connected');
  });

  test('connections in total: the one past the limit is refused with 530, whoever asks, and served again once one closes', async () => {
    const conns = [
      await amqp.connect(url('AKIDALICE', keys.AKIDALICE)),
      await amqp.connect(url('AKIDBOB', keys.AKIDBOB)),
      await amqp.connect(url('AKIDBOB', keys.AKIDBOB)),
    ];
    try {
      assert.match(await attempt('AKIDALICE', keys.AKIDALICE), /Expected ConnectionOpenOk; got <ConnectionClose/);
      assert.match(
        s.server.output(),
        /access to vhost '\/' refused for user 'AKIDALICE': connection limit \(3\) is reached/,
      );
      await conns.pop()!.close();
      assert.equal(await attempt('AKIDALICE', keys.AKIDALICE), 'connected');
    } finally {
      await Promise.all(conns.map((c) => c.close()));
    }
  });
});

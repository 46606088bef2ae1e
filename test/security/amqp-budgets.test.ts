/**
 * AMQP work budgets between tenants (docs/security.md, "Limits of the AMQP port"): the
 * attacker account spends what one connection, one publish or one account may hold, and is
 * refused with RabbitMQ's error, while the bystander's SQS client keeps being served and
 * the server's memory stays within the documented budget.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { connect } from 'node:net';
import { ReceiveMessageCommand, CreateQueueCommand } from '@aws-sdk/client-sqs';
import amqp from 'amqplib';
import { methodFrame, PROTOCOL_HEADER } from '../../src/protocols/amqp/frames.js';
import { RawClient, rawFrame } from '../amqp/raw-client.js';
import { assertServed, startTenants, TENANTS, type TenantServer } from '../support/hostile-tenant.js';
import { pause } from '../amqp/support.js';

const MiB = 1 << 20;

/**
 * A content header whose `headers` table holds one array of `voids` one-byte voids: about
 * 50 times its size once decoded. It announces a 1-byte body that never comes.
 */
function voidsHeader(channel: number, voids: number): Buffer {
  const payload = Buffer.alloc(voids + 25);
  let at = payload.writeUInt16BE(60, 0);
  at = payload.writeUInt16BE(0, at);
  at = payload.writeBigUInt64BE(1n, at);
  at = payload.writeUInt16BE(0x2000, at); // the headers property only
  at = payload.writeUInt32BE(payload.length - at - 4, at);
  at = payload.writeUInt8(1, at);
  at = payload.writeUInt8(0x68, at); // the key `h`
  at = payload.writeUInt8(0x41, at); // an array (`A`)
  at = payload.writeUInt32BE(payload.length - at - 4, at);
  payload.fill('V', at);
  return rawFrame(2, channel, payload);
}

const attacker = TENANTS.attacker;

/**
 * Runs `attack` while the bystander's probe runs (for at least `minMs`, so the probe makes
 * enough calls to judge), asserts the bystander was served, and returns the attack's result.
 */
async function whileServed<T>(t: TenantServer, what: string, attack: () => Promise<T>, minMs = 1500): Promise<T> {
  const probe = await t.probe();
  const started = Date.now();
  const result = await attack();
  await pause(Math.max(0, minMs - (Date.now() - started)));
  assertServed(await probe.stop(), what);
  return result;
}

/** Signs in as the attacker; its raw frames go over it. */
const attackerConnection = (t: TenantServer) =>
  RawClient.signedIn(t.amqpPort!, { user: attacker.accessKeyId, password: attacker.secretAccessKey });

/** `headers` unfinished publishes (each a header of `voids` voids) on channels 2.., as raw frames. */
function unfinishedHeaderFrames(headers: number, voids: number): Buffer {
  return Buffer.concat(
    Array.from({ length: headers }, (_, i) =>
      Buffer.concat([
        methodFrame(i + 2, 'channel.open'),
        methodFrame(i + 2, 'basic.publish', { exchange: '', routingKey: 'nowhere' }),
        voidsHeader(i + 2, voids),
      ]),
    ),
  );
}

/** Sends `frames` as the attacker, then returns the first close the server answers with. */
async function sendUntilClosed(t: TenantServer, frames: Buffer): Promise<{ code?: number; text?: string }> {
  const c = await attackerConnection(t);
  try {
    c.write(frames);
    for (;;) {
      const a = await c.answer(10_000);
      if (a.kind === 'channel.open-ok') continue;
      return { code: a.code, text: a.text ?? a.kind };
    }
  } finally {
    c.close();
  }
}

/** The channel's closing error, once `op` has made the server close it (an RPC's rejection, or the channel's error). */
async function closedWith(ch: amqp.Channel, op: () => unknown): Promise<string> {
  return new Promise<string>((resolve) => {
    ch.once('error', (e: Error) => resolve(e.message));
    void Promise.resolve()
      .then(op)
      .catch((e: Error) => resolve(e.message));
  });
}

/** `n` no-wait basic.consume frames for the queue `consumed` on `channel`. */
const consumeFrames = (channel: number, n: number) =>
  Buffer.concat(
    Array.from({ length: n }, (_, i) =>
      methodFrame(channel, 'basic.consume', {
        queue: 'consumed',
        consumerTag: `c${channel}-${i}`,
        noWait: true,
        arguments: new Map(),
      }),
    ),
  );

/** `n` words of `w`, joined by dots. */
const wordsOf = (w: string, n: number) => Array.from({ length: n }, () => w).join('.');

describe('AMQP budgets between tenants', () => {
  let t: TenantServer;
  before(async () => {
    t = await startTenants({
      amqp: true,
      args: [
        '--amqp-max-unfinished-bytes',
        String(2 * MiB),
        '--amqp-max-unfinished-bytes-total',
        String(8 * MiB),
        '--amqp-max-bindings-per-exchange',
        '50',
        '--amqp-max-bindings-per-account',
        '80',
        '--amqp-max-consumers-per-account',
        '300',
        '--amqp-max-consumers-per-channel',
        '100',
        '--amqp-max-handshakes-per-address',
        '16',
      ],
    });
  });
  after(() => t.stop());

  test('unfinished publishes with large header tables: 25 MiB of void arrays is refused with 506, memory stays in budget', async () => {
    const before = t.rss();
    // 8 connections, one after the other, 400 headers of 8,000 voids each: 25 MiB on the
    // wire, 1.3 GB if decoded and held.
    const frames = unfinishedHeaderFrames(400, 8000);
    // Probed for 4 s: over 100 calls, so one call delayed by the machine is not the p99.
    const answers = await whileServed(
      t,
      'unfinished publishes with large header tables',
      async () => {
        const all = [];
        for (let round = 0; round < 8; round++) all.push(await sendUntilClosed(t, frames));
        return all;
      },
      4000,
    );
    for (const a of answers) {
      assert.equal(a.code, 506, `refused with RESOURCE_ERROR: ${JSON.stringify(a)}`);
      assert.match(a.text ?? '', /RESOURCE_ERROR - unfinished messages on (this connection|the server) exceed/);
    }
    const grew = t.rss() - before;
    console.log(`RSS grew by ${(grew / MiB).toFixed(0)} MiB`);
    assert.ok(grew < 8 * MiB + 64 * MiB, `the server's memory grew by ${(grew / MiB).toFixed(0)} MiB`);
  });

  test('a content header whose tables would be too large decoded is refused before decoding: 406 on its channel', async () => {
    const c = await attackerConnection(t);
    try {
      c.write(methodFrame(1, 'basic.publish', { exchange: '', routingKey: 'nowhere' }));
      c.write(voidsHeader(1, 131_072 - 8 - 25)); // a whole frame of voids
      const a = await c.answer();
      assert.deepEqual([a.kind, a.code], ['channel.close', 406], JSON.stringify(a));
      assert.match(
        a.text ?? '',
        /PRECONDITION_FAILED - content header tables would take more than 524288 bytes decoded/,
      );
    } finally {
      c.close();
    }
  });

  test('topic routing is bounded: bindings and CC keys that cost too much are refused with 406, the bystander is served', async () => {
    const conn = await amqp.connect(t.amqpUrl('attacker'));
    conn.on('error', () => undefined);
    try {
      const ch = await conn.createChannel();
      await ch.assertExchange('attack-topic', 'topic');
      // Ten bindings whose patterns keep many `#` states alive, at the 32-word cap.
      for (let i = 0; i < 10; i++) {
        await ch.assertQueue(`attack-topic-${i}`);
        await ch.bindQueue(`attack-topic-${i}`, 'attack-topic', `${'#.a.'.repeat(15)}#.q${i}`);
      }
      const over = await conn.createChannel();
      assert.match(
        await closedWith(over, () => over.bindQueue('attack-topic-0', 'attack-topic', wordsOf('#', 128))),
        /PRECONDITION_FAILED - topic binding key of 128 words; at most 32/,
      );
      const key = wordsOf('a', 128); // 255 bytes: RabbitMQ's longest routing key
      const answers = await whileServed(t, 'topic routing of 128-word keys with CC', async () => {
        const out: string[] = [];
        for (let round = 0; round < 10; round++) {
          const c = await conn.createChannel();
          const cc = Array.from({ length: round % 2 ? 100 : 60 }, (_, i) => `${key.slice(0, 250)}.${i}`);
          out.push(
            await closedWith(c, () => c.publish('attack-topic', key, Buffer.from('x'), { headers: { CC: cc } })),
          );
        }
        return out;
      });
      for (const [i, a] of answers.entries())
        assert.match(
          a,
          i % 2
            ? /PRECONDITION_FAILED - message with 101 routing keys \(CC and BCC included\); at most 64/
            : /PRECONDITION_FAILED - routing the message visits more than 100000 topic binding states/,
        );
      // Ordinary topic routing still works.
      const ok = await conn.createConfirmChannel();
      await ok.assertQueue('attack-topic-plain');
      await ok.bindQueue('attack-topic-plain', 'attack-topic', 'logs.*.error');
      ok.publish('attack-topic', 'logs.web.error', Buffer.from('routed'));
      await ok.waitForConfirms();
      assert.equal((await ok.get('attack-topic-plain', { noAck: true })) && 'got', 'got');
    } finally {
      await conn.close().catch(() => undefined);
    }
  });

  test('bindings per exchange and per account: the one past either is refused with 406', async () => {
    const conn = await amqp.connect(t.amqpUrl('victim'));
    conn.on('error', () => undefined);
    try {
      let ch = await conn.createChannel();
      await ch.assertExchange('quota-a', 'direct');
      await ch.assertExchange('quota-b', 'direct');
      await ch.assertQueue('quota-q');
      for (let i = 0; i < 50; i++) await ch.bindQueue('quota-q', 'quota-a', `k${i}`);
      await ch.bindQueue('quota-q', 'quota-a', 'k0'); // the same binding again: no new one
      assert.match(
        await closedWith(ch, () => ch.bindQueue('quota-q', 'quota-a', 'k50')),
        /PRECONDITION_FAILED - binding limit of exchange 'quota-a' in vhost '\/' \(50\) is reached/,
      );
      ch = await conn.createChannel();
      for (let i = 0; i < 30; i++) await ch.bindQueue('quota-q', 'quota-b', `k${i}`);
      assert.match(
        await closedWith(ch, () => ch.bindQueue('quota-q', 'quota-b', 'k30')),
        /PRECONDITION_FAILED - binding limit in vhost '\/' \(80\) is reached/,
      );
      // An unbind gives its room back; another account is not counted with this one.
      ch = await conn.createChannel();
      await ch.unbindQueue('quota-q', 'quota-b', 'k0');
      await ch.bindQueue('quota-q', 'quota-b', 'k30');
      const other = await amqp.connect(t.amqpUrl('bystander'));
      const och = await other.createChannel();
      await och.assertExchange('quota-a', 'direct');
      await och.assertQueue('quota-q');
      await och.bindQueue('quota-q', 'quota-a', 'mine');
      await other.close();
    } finally {
      await conn.close().catch(() => undefined);
    }
  });

  test("consumers per account (406) and per channel (530): one account's no-wait consumers leave SQS long polls served", async () => {
    for (const tenant of ['attacker', 'victim'] as const) {
      const conn = await amqp.connect(t.amqpUrl(tenant));
      await (await conn.createChannel()).assertQueue('consumed');
      await conn.close();
    }
    const c = await attackerConnection(t);
    try {
      const answer = await whileServed(t, 'no-wait consumers', async () => {
        // Three channels at the channel cap (100 each) fill the account's 300; the fourth's go past it.
        c.write(consumeFrames(1, 100));
        for (const n of [2, 3, 4]) {
          c.send(n, 'channel.open');
          await c.expect('channel.open-ok');
          c.write(consumeFrames(n, 100));
        }
        const a = await c.answer(10_000);
        // The bystander's long polls are served meanwhile (not 503).
        const sqs = t.client('bystander');
        const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'bystander-long-poll' }));
        await sqs.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 1 }));
        return a;
      });
      assert.deepEqual([answer.kind, answer.code], ['channel.close', 406], JSON.stringify(answer));
      assert.match(answer.text ?? '', /PRECONDITION_FAILED - consumer limit in vhost '\/' \(300\) is reached/);
    } finally {
      c.close();
    }
    // RabbitMQ's consumer_max_per_channel: the consumer past it closes the connection.
    const v = await RawClient.signedIn(t.amqpPort!, {
      user: TENANTS.victim.accessKeyId,
      password: TENANTS.victim.secretAccessKey,
    });
    try {
      v.write(consumeFrames(1, 101));
      const a = await v.answer(10_000);
      assert.deepEqual([a.kind, a.code], ['connection.close', 530], JSON.stringify(a));
      assert.match(a.text ?? '', /NOT_ALLOWED - reached maximum \(100\) of consumers per channel/);
    } finally {
      v.close();
    }
  });

  test('half-open handshakes are limited per address: 256 from 127.0.0.2 leave 127.0.0.1 its sign-in', async () => {
    const sockets = await Promise.all(
      Array.from(
        { length: 256 },
        () =>
          new Promise<import('node:net').Socket>((resolve) => {
            const s = connect({ port: t.amqpPort!, host: '127.0.0.1', localAddress: '127.0.0.2' });
            s.on('error', () => undefined);
            s.once('connect', () => (s.write(PROTOCOL_HEADER), resolve(s)));
            s.once('close', () => resolve(s));
          }),
      ),
    );
    try {
      await pause(300);
      const open = sockets.filter((s) => !s.destroyed && !s.readableEnded).length;
      assert.ok(open <= 16, `${open} half-open handshakes from one address were kept (16 may wait)`);
      const conn = await amqp.connect(t.amqpUrl('bystander'));
      await (await conn.createChannel()).assertQueue('bystander-amqp');
      await conn.close();
    } finally {
      for (const s of sockets) s.destroy();
    }
  });
});

describe('dead-letter fan-out between tenants', () => {
  let t: TenantServer;
  before(async () => {
    t = await startTenants({ amqp: true, manualClock: true });
  });
  after(() => t.stop());

  test('ten queues with a TTL sharing a fanout dead-letter exchange: one message makes at most 1001, the rest are logged and counted', async () => {
    const conn = await amqp.connect(t.amqpUrl('attacker'));
    const ch = await conn.createChannel();
    await ch.assertExchange('fan', 'fanout');
    const queues = Array.from({ length: 10 }, (_, i) => `ttl-${i}`);
    for (const q of queues) {
      await ch.assertQueue(q, { arguments: { 'x-message-ttl': 1000, 'x-dead-letter-exchange': 'fan' } });
      await ch.bindQueue(q, 'fan', '');
    }
    ch.sendToQueue('ttl-0', Buffer.from('one'));
    const total = async () => {
      let n = 0;
      for (const q of queues) n += (await ch.checkQueue(q)).messageCount;
      return n;
    };
    let most = 0;
    await whileServed(t, 'dead-letter fan-out', async () => {
      for (let step = 0; step < 40; step++) {
        await t.server.advanceClock(1100);
        await pause(150);
        const n = await total();
        most = Math.max(most, n);
        if (n === 0 && step > 2) break;
      }
    });
    // Unbounded, the fourth generation alone is 3,024 copies and the total ~10^6.
    assert.ok(most <= 1001, `${most} messages at once`);
    assert.ok(most >= 72, `the fan-out happened (${most} at most)`);
    assert.equal(await total(), 0, 'every copy ended: by its cycle or its budget');
    assert.match(t.server.output(), /dead-letter copies not made: the copies one message may create/);
    await conn.close();
  });
});

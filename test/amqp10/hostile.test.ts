/**
 * Hostile AMQP 1.0 peers (docs/security.md), against a real server process with small
 * limits: junk after the header, half-finished handshakes, oversized frames, session and
 * link floods, an oversized message, a receiver that never settles, a transaction
 * coordinator, `modified` outcomes that would grow a message without end. Each is bounded and answered with its AMQP error; after each, a rhea
 * client is still served.
 */
import assert from 'node:assert/strict';
import { connect as netConnect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { CreateQueueCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import amqp from 'amqplib';
import {
  CODE,
  composite,
  decodePerformative,
  field,
  frame,
  FRAME_AMQP,
  FRAME_SASL,
  FrameParser,
  type Composite,
} from '../../src/protocols/amqp10/frames.js';
import { textOf, v } from '../../src/protocols/amqp10/types.js';
import { startAmqpServer, type AmqpServer } from '../amqp/support.js';
import { close, connect, pause, receiver, send } from './support.js';

const SASL = Buffer.from('AMQP\x03\x01\x00\x00', 'latin1');
const AMQP = Buffer.from('AMQP\x00\x01\x00\x00', 'latin1');

/** A peer that speaks raw frames: what it receives, as performatives, and whether the socket closed. */
class RawPeer {
  readonly got: Composite[] = [];
  closed = false;
  private readonly parser = new FrameParser(1 << 20);
  private buffered = Buffer.alloc(0);
  /** A protocol header comes first, and again after the SASL outcome. */
  private expectHeader = true;

  constructor(
    readonly socket: Socket,
    listen: boolean,
  ) {
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.closed = true;
    });
    if (listen) socket.on('data', (d) => this.read(d));
    else socket.resume();
  }

  private read(d: Buffer): void {
    this.buffered = Buffer.concat([this.buffered, d]);
    for (;;) {
      if (this.expectHeader) {
        if (this.buffered.length < 8) return;
        this.buffered = this.buffered.subarray(8);
        this.expectHeader = false;
        continue;
      }
      if (this.buffered.length < 8 || this.buffered.length < this.buffered.readUInt32BE(0)) return;
      const size = this.buffered.readUInt32BE(0);
      const [f] = this.parser.push(this.buffered.subarray(0, size));
      this.buffered = this.buffered.subarray(size);
      if (!f?.body.length) continue;
      const p = decodePerformative(f.body).performative;
      this.got.push(p);
      if (p.code === CODE.saslOutcome) this.expectHeader = true;
    }
  }

  static async open(port: number, signIn = true): Promise<RawPeer> {
    const socket = netConnect({ port, host: '127.0.0.1' });
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    const peer = new RawPeer(socket, signIn);
    if (!signIn) return peer;
    socket.write(SASL);
    socket.write(
      frame(FRAME_SASL, 0, composite(CODE.saslInit, [v.symbol('PLAIN'), v.binary(Buffer.from('\0guest\0guest'))])),
    );
    socket.write(AMQP);
    socket.write(frame(FRAME_AMQP, 0, composite(CODE.open, [v.string('raw')])));
    await peer.waitFor(CODE.open);
    return peer;
  }

  send(channel: number, code: number, fields: Parameters<typeof composite>[1], payload?: Buffer): void {
    this.socket.write(frame(FRAME_AMQP, channel, composite(code, fields), payload));
  }

  /** The first performative with `code` received (waiting up to `ms`). */
  async waitFor(code: number, ms = 3000): Promise<Composite> {
    for (const end = Date.now() + ms; Date.now() < end; await pause(20)) {
      const p = this.got.find((x) => x.code === code);
      if (p) return p;
    }
    throw new Error(`no performative 0x${code.toString(16)} in ${ms} ms (got ${this.got.map((x) => x.code)})`);
  }

  async waitClosed(ms = 3000): Promise<boolean> {
    for (const end = Date.now() + ms; Date.now() < end && !this.closed; ) await pause(20);
    return this.closed;
  }
}

/** The condition of an error composite in field `i` of `p`. */
const condition = (p: Composite, i: number) => {
  const e = field(p, i);
  return e?.type === 'described' && e.value.type === 'list' ? textOf(e.value.value[0]) : undefined;
};

describe('hostile AMQP 1.0 peers', { timeout: 120_000 }, () => {
  let redrive: AmqpServer;

  before(async () => {
    redrive = await startAmqpServer({
      args: [
        '--amqp-max-handshakes',
        '8',
        '--amqp-handshake-timeout',
        '1',
        '--amqp-max-unacked',
        '5',
        '--amqp-max-connections-per-user',
        '4',
        '--amqp-max-unfinished-bytes',
        '1500000',
      ],
    });
    const sqs = redrive.server.client();
    await sqs.send(new CreateQueueCommand({ QueueName: 'h' }));
    for (let i = 0; i < 20; i++)
      await sqs.send(
        new SendMessageCommand({ QueueUrl: `${redrive.server.url}/000000000000/h`, MessageBody: `m${i}` }),
      );
  });
  after(async () => {
    await redrive?.server.stop();
    redrive?.server.cleanup();
  });

  /** A rhea client still sends and receives. */
  async function stillServed(): Promise<void> {
    const c = await connect(redrive.port);
    assert.deepEqual(await send(c, '/queues/h', [{ body: 'ok' }]), [{ outcome: 'accepted' }]);
    await close(c);
  }

  test('junk after the SASL header closes the connection', async () => {
    const peer = await RawPeer.open(redrive.port, false);
    peer.socket.write(SASL);
    peer.socket.write(Buffer.alloc(64, 0xff));
    assert.ok(await peer.waitClosed());
    await stillServed();
  });

  test('half-finished handshakes are bounded and time out', async () => {
    const peers = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const p = await RawPeer.open(redrive.port, false);
        p.socket.write(SASL);
        return p;
      }),
    );
    await pause(300);
    const open = peers.filter((p) => !p.closed).length;
    assert.ok(open <= 8, `${open} handshakes held, the limit is 8`);
    for (const p of peers) assert.ok(await p.waitClosed(3000), 'each is dropped by the handshake time-out');
    await stillServed();
  });

  test('a frame over max-frame-size closes the connection with a framing error', async () => {
    const peer = await RawPeer.open(redrive.port);
    const huge = Buffer.alloc(200_000);
    huge.writeUInt32BE(huge.length, 0);
    huge[4] = 2;
    peer.socket.write(huge);
    const closeFrame = await peer.waitFor(CODE.close);
    assert.equal(condition(closeFrame, 0), 'amqp:connection:framing-error');
    assert.ok(await peer.waitClosed());
    await stillServed();
  });

  test('sessions over channel-max and links over handle-max are refused', async () => {
    const peer = await RawPeer.open(redrive.port);
    peer.send(0, CODE.begin, [undefined, v.uint(0), v.uint(100), v.uint(100)]);
    await peer.waitFor(CODE.begin);
    for (let h = 0; h < 300; h++)
      peer.send(0, CODE.attach, [
        v.string(`l${h}`),
        v.uint(h),
        v.bool(false),
        undefined,
        undefined,
        undefined,
        composite(CODE.target, [v.string('/queues/h')]),
      ]);
    const end = await peer.waitFor(CODE.end, 5000);
    assert.equal(condition(end, 0), 'amqp:session:handle-max-exceeded');
    peer.send(5000, CODE.begin, [undefined, v.uint(0), v.uint(100), v.uint(100)]);
    const closeFrame = await peer.waitFor(CODE.close);
    assert.equal(condition(closeFrame, 0), 'amqp:resource-limit-exceeded');
    peer.socket.destroy();
    await stillServed();
  });

  test('connections over the per-user limit are refused at open with amqp:resource-limit-exceeded', async () => {
    await pause(200);
    const held = await Promise.all([1, 2, 3, 4].map(() => connect(redrive.port)));
    const fifth = await RawPeer.open(redrive.port);
    const refusal = await fifth.waitFor(CODE.close);
    assert.equal(condition(refusal, 0), 'amqp:resource-limit-exceeded');
    assert.ok(await fifth.waitClosed());
    for (const c of held) await close(c);
    await pause(200);
    await stillServed();
  });

  test('an unfinished message past --amqp-max-unfinished-bytes closes the connection', async () => {
    const peer = await RawPeer.open(redrive.port);
    peer.send(0, CODE.begin, [undefined, v.uint(0), v.uint(1000), v.uint(1000)]);
    await peer.waitFor(CODE.begin);
    for (const handle of [0, 1])
      peer.send(0, CODE.attach, [
        v.string(`flood-${handle}`),
        v.uint(handle),
        v.bool(false),
        undefined,
        undefined,
        composite(CODE.source, []),
        composite(CODE.target, [v.string('/queues/h')]),
      ]);
    await pause(300);
    const chunk = Buffer.alloc(60_000, 1);
    // On each of two links, one delivery of 900 KB (under the 1 MiB message size) whose
    // frames all say more is to come: 1.8 MB unfinished, over the 1.5 MB limit.
    for (let i = 0; i < 15 && !peer.closed; i++) {
      for (const handle of [0, 1]) {
        const first = i === 0;
        const head = [
          v.uint(handle),
          first ? v.uint(handle) : undefined,
          first ? v.binary(Buffer.from([handle])) : undefined,
        ];
        peer.send(0, CODE.transfer, [...head, first ? v.uint(0) : undefined, undefined, v.bool(true)], chunk);
      }
    }
    const closeFrame = await peer.waitFor(CODE.close);
    assert.equal(condition(closeFrame, 0), 'amqp:resource-limit-exceeded');
    assert.ok(await peer.waitClosed());
    await stillServed();
  });

  test('a message over 1 MiB detaches its link with amqp:link:message-size-exceeded', async () => {
    const c = await connect(redrive.port);
    const err = await send(c, '/queues/h', [{ body: Buffer.alloc(1_100_000, 'x').toString() }]).catch((e) => e);
    assert.equal((err as { condition?: string }).condition, 'amqp:link:message-size-exceeded');
    await close(c);
    await stillServed();
  });

  test('a receiver that never settles holds at most --amqp-max-unacked deliveries', async () => {
    const c = await connect(redrive.port);
    const r = receiver(c, 'h');
    r.link.add_credit(50);
    await r.next(5);
    await pause(500);
    assert.equal(r.got.length, 5, 'no more than the unsettled bound');
    r.got[0]!.delivery.accept();
    await r.next(6);
    await close(c);
  });

  test('modified outcomes adding annotations round after round leave the message within 1 MiB', async () => {
    const model = await amqp.connect(redrive.url);
    const ch = await model.createChannel();
    await ch.assertQueue('h-grow', { arguments: { 'x-queue-type': 'quorum' } });
    await model.close();
    const c = await connect(redrive.port);
    await send(c, '/queues/h-grow', [{ body: 'grown' }]);
    const r = receiver(c, 'h-grow');
    const value = 'a'.repeat(100_000);
    // 15 rounds of 100 KB under new keys: 1.5 MB if every merge were kept.
    for (let round = 1; round <= 15; round++) {
      r.link.add_credit(1);
      const got = (await r.next(round))[round - 1]!;
      got.delivery.modified({ delivery_failed: true, message_annotations: { [`x-opt-round-${round}`]: value } });
    }
    r.link.add_credit(1);
    const last = (await r.next(16))[15]!;
    const kept = Object.keys(last.message.message_annotations ?? {}).filter((k) => k.startsWith('x-opt-round-'));
    assert.ok(kept.length >= 5 && kept.length <= 10, `${kept.length} rounds kept: as many as fit in 1 MiB`);
    assert.equal(last.message.delivery_count, 15, 'each outcome applied, merged or not');
    last.delivery.accept();
    await close(c);
    await stillServed();
  });

  test('a transaction coordinator is refused with amqp:not-implemented', async () => {
    const peer = await RawPeer.open(redrive.port);
    peer.send(0, CODE.begin, [undefined, v.uint(0), v.uint(100), v.uint(100)]);
    await peer.waitFor(CODE.begin);
    peer.send(0, CODE.attach, [
      v.string('txn'),
      v.uint(0),
      v.bool(false),
      undefined,
      undefined,
      composite(CODE.source, []),
      composite(CODE.coordinator, [v.symbolArray(['amqp:local-transactions'])]),
    ]);
    const detach = await peer.waitFor(CODE.detach);
    assert.equal(condition(detach, 2), 'amqp:not-implemented');
    peer.socket.destroy();
    await stillServed();
  });
});

import type { Socket } from 'node:net';
import { AmqpBroker } from '../../engine/amqp/broker.js';
import type { Engine } from '../../engine/engine.js';
import type { Login, SignIn } from '../amqp/handshake.js';
import type { AmqpUsage } from '../amqp/limits.js';
import type { AmqpRegistry } from '../amqp/registry.js';
import { DecodeError } from './codec.js';
import { Amqp10Error, conditionOf, errorValue } from './errors.js';
import {
  CODE,
  composite,
  decodePerformative,
  EMPTY_FRAME,
  field,
  frame,
  FRAME_AMQP,
  FRAME_SASL,
  FrameParser,
  MIN_MAX_FRAME_SIZE,
  type Composite,
  type Frame,
} from './frames.js';
import { idleTimer } from './idle.js';
import { AMQP_HEADER, SASL_HEADER } from './protocol-switch.js';
import { Session, type SessionHost } from './session.js';
import { numberOf, textOf, v } from './types.js';

export interface Amqp10ConnectionOptions {
  engine: Engine;
  registry: AmqpRegistry;
  signIn: SignIn;
  /** Whether ANONYMOUS is offered (open mode: it signs in as guest, from loopback only). */
  anonymous: boolean;
  usage: AmqpUsage;
  /** Seconds of the idle time-out the server announces (its heartbeat). */
  heartbeat?: number;
  log: { warn(obj: object, msg?: string): void };
}

/** Bytes buffered for the socket past which links send nothing more until it drains (0-9-1's too). */
const HIGH_WATER = 1 << 20;
/** Frames waiting to be handled past which the socket is not read (0-9-1's 2,000 methods). */
const MAX_WAITING_FRAMES = 2000;
/** The largest frame the server accepts, as for 0-9-1. */
const MAX_FRAME_SIZE = 131_072;

type State = 'sasl-header' | 'sasl-init' | 'amqp-header' | 'open' | 'opened' | 'closed';

let nextId = 1;

/**
 * One AMQP 1.0 connection: the SASL layer (PLAIN, and ANONYMOUS in open mode), then the
 * AMQP layer's open and close, idle time-outs, and its sessions by channel. Errors close
 * the connection (or end a session, or detach a link) with an AMQP error condition.
 */
export class Amqp10Connection implements SessionHost {
  readonly connectionId = 1_000_000_000 + nextId++;
  broker!: AmqpBroker;
  login?: Login;
  private state: State = 'sasl-header';
  private head = Buffer.alloc(0);
  // Before open, frames are small (SASL, open): 4 KiB is plenty.
  private readonly parser = new FrameParser(4096);
  peerMaxFrame = MIN_MAX_FRAME_SIZE;
  private readonly sessions = new Map<number, Session>();
  /** Channels whose session the server ended with an error: the peer's frames on them are dropped until its end. */
  private readonly ending = new Set<number>();
  private channelMax: number;
  private handshake?: { timer: NodeJS.Timeout; bytes: number; end: () => void };
  private idleTimer?: NodeJS.Timeout;
  private lastReceived = Date.now();
  private lastSent = Date.now();
  private unsettled = 0;
  private unfinished = 0;
  private counted = false;
  private roomWaiters: (() => void)[] = [];
  /** Frames of a session are handled one after another (attach awaits the store). */
  private work: Promise<void> = Promise.resolve();
  private waiting = 0;
  readonly done: Promise<void>;
  readonly registry: AmqpRegistry;
  readonly log: Amqp10ConnectionOptions['log'];
  readonly stats = {
    /** RabbitMQ's connection name, `peer_host:peer_port -> host:port`. */
    name: '',
    connectedAt: Date.now(),
    recvOct: 0,
    sendOct: 0,
    containerId: '',
  };

  constructor(
    readonly socket: Socket,
    private readonly opts: Amqp10ConnectionOptions,
  ) {
    const limits = opts.usage.limits;
    this.registry = opts.registry;
    this.log = opts.log;
    this.stats.name = `${socket.remoteAddress}:${socket.remotePort} -> ${socket.localAddress}:${socket.localPort}`;
    this.channelMax = limits.channelMax;
    this.handshake = {
      timer: setTimeout(() => this.socket.destroy(), limits.handshakeTimeoutMs),
      bytes: 0,
      end: opts.usage.startHandshake(socket.remoteAddress),
    };
    socket.setNoDelay(true);
    socket.on('data', (chunk) => this.onData(chunk));
    socket.on('error', () => socket.destroy());
    socket.on('drain', () => this.wakeRoom());
    const stopListening = opts.usage.onAlarm(() => {
      if (opts.usage.alarm) return;
      for (const session of this.sessions.values()) session.alarmCleared();
    });
    socket.on('close', stopListening);
    this.done = new Promise((resolve) => socket.on('close', () => resolve(this.cleanup())));
  }

  write(frames: Buffer[]): void {
    if (this.socket.destroyed || this.state === 'closed') return;
    this.lastSent = Date.now();
    this.socket.cork();
    for (const f of frames) {
      this.stats.sendOct += f.length;
      this.socket.write(f);
    }
    this.socket.uncork();
  }

  /**
   * Deliveries the connection may send now: none while its socket holds more than
   * 1 MiB unsent (a peer that reads slowly is not sent more, whatever its credit), else
   * what the unsettled bound leaves.
   */
  sendRoom(): number {
    if (this.socket.writableLength >= HIGH_WATER) return 0;
    return this.opts.usage.limits.maxUnacked - this.unsettled;
  }

  unsettledChanged(delta: number): void {
    this.unsettled += delta;
    if (delta < 0) this.wakeRoom();
  }

  private wakeRoom(): void {
    const w = this.roomWaiters;
    this.roomWaiters = [];
    for (const f of w) f();
  }

  /** Resolves once deliveries are settled or the socket drains (or the connection ends). */
  roomChanged(): Promise<void> {
    return new Promise((resolve) => this.roomWaiters.push(resolve));
  }

  get alarm(): boolean {
    return this.opts.usage.alarm;
  }

  queued(delta: number): void {
    this.opts.usage.queued(delta);
  }

  /** Bytes of messages still arriving, per connection and in total, with the 0-9-1 limits. */
  holdBytes(delta: number): void {
    this.unfinished += delta;
    this.opts.usage.unfinishedBytes += delta;
    if (delta <= 0) return;
    const { maxUnfinishedBytes, maxUnfinishedBytesTotal } = this.opts.usage.limits;
    if (this.unfinished > maxUnfinishedBytes || this.opts.usage.unfinishedBytes > maxUnfinishedBytesTotal)
      throw new Amqp10Error('amqp:resource-limit-exceeded', 'unfinished messages exceed the limit');
  }

  private onData(chunk: Buffer): void {
    if (this.state === 'closed') return;
    this.lastReceived = Date.now();
    this.stats.recvOct += chunk.length;
    if (this.handshake && (this.handshake.bytes += chunk.length) > this.opts.usage.limits.handshakeMaxBytes) {
      this.opts.log.warn({ address: this.socket.remoteAddress }, 'AMQP 1.0 connection sent too much before opening');
      this.socket.destroy();
      return;
    }
    try {
      this.receive(chunk);
    } catch (e) {
      this.fail(e);
    }
  }

  private receive(chunk: Buffer): void {
    if (this.state === 'sasl-header' || this.state === 'amqp-header') {
      this.head = Buffer.concat([this.head, chunk]);
      if (this.head.length < 8) return;
      const header = this.head.subarray(0, 8);
      chunk = this.head.subarray(8);
      this.head = Buffer.alloc(0);
      this.header(header);
      if ((this.state as State) === 'closed') return;
    }
    this.parser.append(chunk);
    for (let f = this.parser.next(); f; f = this.parser.next()) {
      this.frame(f);
      if ((this.state as State) === 'closed') return;
      // After the SASL outcome, the AMQP header comes: not a frame.
      if ((this.state as State) === 'amqp-header') return this.receive(this.parser.takeRest());
    }
  }

  private header(h: Buffer): void {
    const expected = this.state === 'sasl-header' ? SASL_HEADER : AMQP_HEADER;
    if (!h.equals(expected)) {
      // RabbitMQ 4 requires SASL: a peer that skips it (or speaks something else) gets the header it must use.
      this.state = 'closed';
      this.socket.end(expected);
      return;
    }
    this.write([expected]);
    if (this.state === 'amqp-header') {
      this.state = 'open';
      return;
    }
    this.state = 'sasl-init';
    const mechanisms = this.opts.anonymous ? ['PLAIN', 'ANONYMOUS'] : ['PLAIN'];
    this.write([frame(FRAME_SASL, 0, composite(CODE.saslMechanisms, [v.symbolArray(mechanisms)]))]);
  }

  private frame(f: Frame): void {
    if (f.body.length === 0) return; // an empty frame: a heartbeat
    const { performative: p, payload } = decodePerformative(f.body);
    if (this.state === 'sasl-init') {
      if (f.type !== FRAME_SASL || p.code !== CODE.saslInit)
        throw new Amqp10Error('amqp:not-allowed', 'expected sasl-init');
      return this.saslInit(p);
    }
    if (f.type !== FRAME_AMQP) throw new Amqp10Error('amqp:not-allowed', 'a SASL frame after SASL');
    if (this.state === 'open') {
      if (p.code !== CODE.open || f.channel !== 0) throw new Amqp10Error('amqp:not-allowed', 'expected open');
      return this.open(p);
    }
    if (p.code === CODE.close) return this.closed(p);
    if (p.code === CODE.begin) return this.begin(f.channel, p);
    const session = this.sessions.get(f.channel);
    if (!session && this.ending.has(f.channel)) {
      if (p.code === CODE.end) this.ending.delete(f.channel);
      return;
    }
    if (!session) throw new Amqp10Error('amqp:not-allowed', `no session on channel ${f.channel}`);
    if (p.code === CODE.end) {
      this.sessions.delete(f.channel);
      session.end();
      this.write([frame(FRAME_AMQP, session.channel, composite(CODE.end, []))]);
      return;
    }
    // Frames wait behind one that awaits the store (an attach): past a bound, the socket
    // is not read until they are handled, so a peer cannot pile them up in memory.
    if (++this.waiting === MAX_WAITING_FRAMES) this.socket.pause();
    this.work = this.work
      .then(() => (session.ended ? undefined : session.handle(p, payload)))
      .catch((e) => this.sessionFailed(session, e))
      .finally(() => {
        if (--this.waiting === MAX_WAITING_FRAMES / 4 && !this.socket.destroyed) this.socket.resume();
      });
  }

  private sessionFailed(session: Session, e: unknown): void {
    if (e instanceof Amqp10Error && e.scope === 'session') {
      this.sessions.delete(session.channel);
      this.ending.add(session.channel);
      session.end();
      this.write([frame(FRAME_AMQP, session.channel, composite(CODE.end, [errorValue(conditionOf(e))]))]);
      return;
    }
    this.fail(e);
  }

  private saslInit(p: Composite): void {
    const mechanism = textOf(field(p, 0)) ?? '';
    const response = field(p, 1);
    const address = this.socket.remoteAddress;
    let login: Login | undefined;
    if (mechanism === 'PLAIN' && response?.type === 'binary')
      login = this.opts.signIn.login('PLAIN', response.value, address);
    // ANONYMOUS signs in as guest, as RabbitMQ 4's anonymous_login_user does, from loopback only.
    else if (mechanism === 'ANONYMOUS' && this.opts.anonymous)
      login = this.opts.signIn.login('PLAIN', Buffer.from('\0guest\0guest'), address);
    else this.opts.log.warn({ address, mechanism: mechanism.slice(0, 64) }, 'AMQP 1.0 SASL mechanism refused');
    this.write([frame(FRAME_SASL, 0, composite(CODE.saslOutcome, [v.ubyte(login ? 0 : 1)]))]);
    if (!login) {
      this.state = 'closed';
      this.socket.end();
      return;
    }
    this.login = login;
    this.broker = new AmqpBroker(this.opts.engine, login.account);
    this.state = 'amqp-header';
  }

  private open(p: Composite): void {
    const refusal = this.opts.usage.openConnection(this.login!.user);
    if (refusal) throw new Amqp10Error('amqp:resource-limit-exceeded', refusal);
    this.counted = true;
    this.stats.containerId = (textOf(field(p, 0)) ?? '').slice(0, 256);
    const max = numberOf(field(p, 2)) ?? 0xffffffff;
    if (max < MIN_MAX_FRAME_SIZE) throw new Amqp10Error('amqp:invalid-field', `max-frame-size ${max} is under 512`);
    this.peerMaxFrame = Math.min(max, MAX_FRAME_SIZE);
    this.parser.maxFrameSize = MAX_FRAME_SIZE;
    this.channelMax = Math.min(numberOf(field(p, 3)) ?? 0xffff, this.opts.usage.limits.channelMax);
    const heartbeat = (this.opts.heartbeat ?? 60) * 1000;
    this.endHandshake();
    this.state = 'opened';
    this.write([
      frame(
        FRAME_AMQP,
        0,
        composite(CODE.open, [
          v.string('redrive'),
          undefined,
          v.uint(MAX_FRAME_SIZE),
          v.ushort(this.channelMax),
          heartbeat ? v.uint(heartbeat) : undefined,
        ]),
      ),
    ]);
    this.idleTimer = idleTimer(numberOf(field(p, 4)) ?? 0, heartbeat, {
      silentFor: () => Date.now() - this.lastReceived,
      quietFor: () => Date.now() - this.lastSent,
      heartbeat: () => this.write([EMPTY_FRAME]),
      drop: () => this.socket.destroy(),
    });
  }

  private endHandshake(): void {
    if (!this.handshake) return;
    clearTimeout(this.handshake.timer);
    this.handshake.end();
    this.handshake = undefined;
  }

  private begin(channel: number, p: Composite): void {
    if (field(p, 0) !== undefined) throw new Amqp10Error('amqp:not-allowed', 'begin with a remote-channel');
    if (this.sessions.has(channel) || this.ending.has(channel))
      throw new Amqp10Error('amqp:not-allowed', `channel ${channel} is in use`);
    if (channel > this.channelMax)
      throw new Amqp10Error(
        'amqp:resource-limit-exceeded',
        `channel ${channel} is over channel-max ${this.channelMax}`,
      );
    this.sessions.set(channel, new Session(channel, channel, p, this));
  }

  private closed(_p: Composite): void {
    this.write([frame(FRAME_AMQP, 0, composite(CODE.close, []))]);
    this.state = 'closed';
    this.socket.end();
  }

  /** Closes the connection with the error (a decode error, a refusal, a bug). */
  fail(e: unknown): void {
    if (this.state === 'closed') return;
    const c = conditionOf(e);
    if (c.condition === 'amqp:internal-error')
      this.opts.log.warn({ err: (e as Error)?.message }, 'AMQP 1.0 connection failed');
    // Refused at open (a connection limit): the spec's answer is an open, then the close.
    if (this.state === 'open') this.write([frame(FRAME_AMQP, 0, composite(CODE.open, [v.string('redrive')]))]);
    if (this.state === 'opened' || this.state === 'open') {
      const condition =
        e instanceof DecodeError && /frame/.test(e.message) ? 'amqp:connection:framing-error' : c.condition;
      this.write([frame(FRAME_AMQP, 0, composite(CODE.close, [errorValue({ ...c, condition })]))]);
    }
    this.state = 'closed';
    const drop = setTimeout(() => this.socket.destroy(), 1000);
    drop.unref();
    this.socket.end();
  }

  /** Closes it from the server's side (management API, shutdown). */
  forceClose(reason: string): void {
    this.fail(new Amqp10Error('amqp:connection:forced', reason));
  }

  /** Its sessions, for the management API (live-view.ts). */
  sessionList(): Session[] {
    return this.state === 'opened' ? [...this.sessions.values()] : [];
  }

  get opened(): boolean {
    return this.state === 'opened';
  }

  private cleanup(): void {
    this.state = 'closed';
    this.endHandshake();
    clearInterval(this.idleTimer);
    for (const s of this.sessions.values()) s.end();
    this.sessions.clear();
    this.holdBytes(-this.unfinished);
    if (this.counted) this.opts.usage.closeConnection(this.login!.user);
    this.counted = false;
    this.wakeRoom();
  }
}

import type { Socket } from 'node:net';
import { AmqpBroker } from '../../engine/amqp/broker.js';
import { AmqpError, CODES, amqpErrors } from '../../engine/amqp/errors.js';
import type { Engine } from '../../engine/engine.js';
import { DecodeError, field, Reader, strOf, type FieldTable } from './codec.js';
import { Channel, type ChannelHost } from './channel.js';
import {
  FRAME_BODY, FRAME_HEADER, FRAME_HEARTBEAT, FRAME_METHOD, FrameParser, HEARTBEAT, methodFrame, PROTOCOL_HEADER, type Frame,
} from './frames.js';
import type { AmqpRegistry } from './registry.js';
import { decodeArgs, lookupMethod, type Method } from './spec.js';

/** Signs a user in: the account it acts as, or undefined (refused). */
export type Authenticate = (user: string, password: string, remoteAddress: string | undefined) => string | undefined;

export interface ConnectionOptions {
  engine: Engine;
  registry: AmqpRegistry;
  authenticate: Authenticate;
  /** Seconds the server proposes (RabbitMQ's default: 60). */
  heartbeat?: number;
  log: { warn(obj: object, msg?: string): void };
}

const FRAME_MAX = 131_072;
const MIN_FRAME_MAX = 4096;
const CHANNEL_MAX = 2047;
/** Bytes buffered for the socket past which consumers wait for it to drain. */
const HIGH_WATER = 1 << 20;
/**
 * Methods waiting on this connection's channels past which it stops reading the socket
 * (TCP then slows the publisher down), and below which it reads again.
 */
const BACKLOG_PAUSE = 2000;
const BACKLOG_RESUME = 500;

type State = 'header' | 'start-ok' | 'tune-ok' | 'open' | 'ready' | 'closing' | 'closed';

let nextId = 1;

/**
 * One AMQP connection: protocol header, start/tune/open negotiation with PLAIN sign-in,
 * heartbeats, channels, and the close handshakes. Connection errors close it with a
 * connection.close carrying RabbitMQ's reply code; channel errors only their channel.
 */
export class Connection implements ChannelHost {
  readonly id = nextId++;
  broker!: AmqpBroker;
  frameMax = FRAME_MAX;
  private state: State = 'header';
  private readonly parser = new FrameParser(FRAME_MAX);
  private readonly channels = new Map<number, Channel>();
  private channelMax = CHANNEL_MAX;
  private heartbeatTimer?: NodeJS.Timeout;
  private lastReceived = Date.now();
  private lastSent = Date.now();
  private closeTimer?: NodeJS.Timeout;
  private pending = 0;
  /** Settles once the socket is gone and its messages and exclusive queues are dealt with. */
  readonly done: Promise<void>;

  constructor(private readonly socket: Socket, private readonly opts: ConnectionOptions) {
    socket.setNoDelay(true);
    socket.on('data', (chunk) => this.onData(chunk));
    socket.on('error', () => socket.destroy());
    this.done = new Promise((resolve) => socket.on('close', () => void this.cleanup().finally(resolve)));
  }

  get registry(): AmqpRegistry {
    return this.opts.registry;
  }

  write(frames: Buffer[]): void {
    if (this.socket.destroyed || this.state === 'closed') return;
    this.lastSent = Date.now();
    if (frames.length === 1) {
      this.socket.write(frames[0]!);
      return;
    }
    this.socket.cork();
    for (const f of frames) this.socket.write(f);
    this.socket.uncork();
  }

  backlog(delta: number): void {
    this.pending += delta;
    if (this.pending >= BACKLOG_PAUSE && !this.socket.isPaused()) this.socket.pause();
    else if (this.pending <= BACKLOG_RESUME && this.socket.isPaused()) this.socket.resume();
  }

  writable(): boolean {
    return this.socket.writableLength < HIGH_WATER;
  }

  drained(): Promise<void> {
    return new Promise((resolve) => {
      if (this.socket.destroyed) return resolve();
      const done = () => {
        this.socket.off('drain', done);
        this.socket.off('close', done);
        resolve();
      };
      this.socket.once('drain', done);
      this.socket.once('close', done);
    });
  }

  private onData(chunk: Buffer): void {
    try {
      this.receive(chunk);
    } catch (e) {
      // A bug must cost this connection at most, never the server.
      this.opts.log.warn({ connection: this.id, err: (e as Error)?.message }, 'AMQP connection failed');
      this.socket.destroy();
    }
  }

  private receive(chunk: Buffer): void {
    this.lastReceived = Date.now();
    this.parser.push(chunk);
    if (this.state === 'header') {
      const header = this.parser.takeRaw(8);
      if (!header) return;
      if (!header.equals(PROTOCOL_HEADER)) {
        // The spec's answer to a protocol we do not speak: our header, then close.
        this.socket.end(PROTOCOL_HEADER);
        this.state = 'closed';
        return;
      }
      this.state = 'start-ok';
      this.send0('connection.start', {
        versionMajor: 0, versionMinor: 9, serverProperties: serverProperties(), mechanisms: 'PLAIN AMQPLAIN', locales: 'en_US',
      });
    }
    try {
      for (let f = this.parser.next(); f && this.state !== 'closed'; f = this.parser.next()) this.onFrame(f);
    } catch (e) {
      this.fail(e instanceof AmqpError ? e : amqpErrors.frameError(String((e as Error).message)));
    }
  }

  private send0(name: Parameters<typeof methodFrame>[1], args?: Record<string, unknown>): void {
    this.write([methodFrame(0, name, args)]);
  }

  private decode(f: Frame): Method {
    if (f.payload.length < 4) throw amqpErrors.frameError('method frame shorter than its class and method ids');
    const classId = f.payload.readUInt16BE(0);
    const methodId = f.payload.readUInt16BE(2);
    const def = lookupMethod(classId, methodId);
    if (!def) throw new AmqpError(CODES.NOT_IMPLEMENTED, `unknown method {${classId},${methodId}}`, classId, methodId);
    try {
      return { name: def.name, classId, methodId, args: decodeArgs(def, new Reader(f.payload.subarray(4))) };
    } catch (e) {
      if (e instanceof DecodeError || e instanceof RangeError) {
        throw new AmqpError(CODES.FRAME_ERROR, `cannot decode ${def.name}: ${e.message}`, classId, methodId);
      }
      throw e;
    }
  }

  private onFrame(f: Frame): void {
    if (this.state === 'closing') {
      if (f.type === FRAME_METHOD && f.channel === 0) {
        const m = this.decode(f);
        if (m.name === 'connection.close') this.send0('connection.close-ok');
        if (m.name === 'connection.close' || m.name === 'connection.close-ok') this.finish();
      }
      return;
    }
    if (f.type === FRAME_HEARTBEAT) {
      if (f.channel !== 0) throw amqpErrors.unexpectedFrame('heartbeat frame on a channel other than 0');
      return;
    }
    if (this.state !== 'ready') {
      if (f.type !== FRAME_METHOD || f.channel !== 0) throw amqpErrors.unexpectedFrame('frame before the connection is open');
      return this.negotiate(this.decode(f));
    }
    if (f.channel === 0) {
      if (f.type !== FRAME_METHOD) throw amqpErrors.unexpectedFrame('content frame on channel 0');
      return this.connectionMethod(this.decode(f));
    }
    const ch = this.channels.get(f.channel);
    if (f.type === FRAME_METHOD) return this.channelMethod(f.channel, ch, this.decode(f));
    if (!ch) throw amqpErrors.channelError(`expected 'channel.open' on channel ${f.channel}`);
    if (ch.closing) return;
    try {
      if (f.type === FRAME_HEADER) ch.publisher.header(f.payload);
      else if (f.type === FRAME_BODY) ch.publisher.body(f.payload);
    } catch (e) {
      if (e instanceof DecodeError) throw amqpErrors.frameError(`cannot decode the content header: ${e.message}`);
      throw e;
    }
  }

  private negotiate(m: Method): void {
    const expected = { 'start-ok': 'connection.start-ok', 'tune-ok': 'connection.tune-ok', open: 'connection.open' }[this.state as 'open'];
    if (m.name === 'connection.close') {
      this.send0('connection.close-ok');
      return this.finish();
    }
    if (m.name !== expected) throw amqpErrors.commandInvalid(`expected '${expected}', got '${m.name}'`);
    const a = m.args;
    if (m.name === 'connection.start-ok') {
      const creds = credentials(String(a.mechanism), a.response as Buffer);
      const account = creds && this.opts.authenticate(creds.user, creds.password, this.socket.remoteAddress);
      if (!account) {
        throw new AmqpError(CODES.ACCESS_REFUSED, `Login was refused using authentication mechanism ${String(a.mechanism)}. For details see the broker logfile.`, 0, 0, true);
      }
      this.broker = new AmqpBroker(this.opts.engine, account);
      this.state = 'tune-ok';
      this.send0('connection.tune', { channelMax: CHANNEL_MAX, frameMax: FRAME_MAX, heartbeat: this.opts.heartbeat ?? 60 });
    } else if (m.name === 'connection.tune-ok') {
      const frameMax = Number(a.frameMax) || FRAME_MAX;
      if (frameMax < MIN_FRAME_MAX || frameMax > FRAME_MAX) {
        throw new AmqpError(CODES.NOT_ALLOWED, `frame_max=${frameMax} is outside ${MIN_FRAME_MAX}..${FRAME_MAX}`);
      }
      this.frameMax = frameMax;
      this.parser.frameMax = frameMax;
      this.channelMax = Number(a.channelMax) === 0 ? CHANNEL_MAX : Math.min(Number(a.channelMax), CHANNEL_MAX);
      this.startHeartbeat(Number(a.heartbeat));
      this.state = 'open';
    } else {
      if (a.virtualHost !== '/') throw new AmqpError(CODES.NOT_ALLOWED, `vhost ${String(a.virtualHost)} not found`);
      this.state = 'ready';
      this.send0('connection.open-ok');
    }
  }

  private connectionMethod(m: Method): void {
    switch (m.name) {
      case 'connection.close':
        this.state = 'closing';
        this.send0('connection.close-ok');
        return this.finish();
      case 'connection.close-ok': case 'connection.blocked': case 'connection.unblocked':
        return;
      case 'connection.update-secret':
        throw new AmqpError(CODES.NOT_IMPLEMENTED, 'connection.update-secret', m.classId, m.methodId);
      default:
        throw new AmqpError(CODES.CHANNEL_ERROR, `${m.name} on channel 0`, m.classId, m.methodId);
    }
  }

  private channelMethod(n: number, ch: Channel | undefined, m: Method): void {
    if (!ch) {
      if (m.name !== 'channel.open') throw amqpErrors.channelError(`expected 'channel.open'`);
      if (n > this.channelMax) throw new AmqpError(CODES.NOT_ALLOWED, `channel ${n} above channel_max ${this.channelMax}`, m.classId, m.methodId);
      this.channels.set(n, new Channel(n, this));
      this.write([methodFrame(n, 'channel.open-ok')]);
      return;
    }
    if (ch.closing) {
      if (m.name === 'channel.close') this.write([methodFrame(n, 'channel.close-ok')]);
      if (m.name === 'channel.close' || m.name === 'channel.close-ok') this.channels.delete(n);
      return;
    }
    if (ch.publisher.expectingContent) {
      throw amqpErrors.unexpectedFrame(`expected content header for class 60, got non content header frame instead`);
    }
    switch (m.name) {
      case 'channel.open':
        throw amqpErrors.channelError("second 'channel.open' seen");
      case 'channel.close':
        ch.open = false;
        this.channels.delete(n);
        void ch.release().finally(() => this.write([methodFrame(n, 'channel.close-ok')]));
        return;
      case 'channel.close-ok': case 'channel.flow-ok':
        return;
    }
    if (m.classId === 10) throw new AmqpError(CODES.COMMAND_INVALID, `connection method ${m.name} on channel ${n}`, m.classId, m.methodId);
    try {
      ch.handle(m);
    } catch (e) {
      ch.raise(e, m);
    }
  }

  /** A connection error: connection.close with its code; the socket ends on close-ok (or after a second). */
  fail(err: AmqpError): void {
    if (this.state === 'closing' || this.state === 'closed') return;
    if (this.state === 'header') {
      this.socket.destroy();
      return;
    }
    this.state = 'closing';
    this.write([methodFrame(0, 'connection.close', { replyCode: err.code, replyText: err.replyText, classId: err.classId, methodId: err.methodId })]);
    this.closeTimer = setTimeout(() => this.finish(), 1000);
    void this.releaseChannels();
  }

  private finish(): void {
    this.state = 'closed';
    this.socket.end();
    this.socket.destroySoon();
  }

  private startHeartbeat(seconds: number): void {
    if (!seconds) return;
    const ms = seconds * 1000;
    this.heartbeatTimer = setInterval(() => {
      const now = Date.now();
      // Two missed intervals, as RabbitMQ counts them, mean the peer is gone.
      if (now - this.lastReceived > 2 * ms) {
        this.opts.log.warn({ connection: this.id }, 'AMQP connection missed heartbeats: closing it');
        this.socket.destroy();
        return;
      }
      if (now - this.lastSent >= ms / 2) this.write([HEARTBEAT]);
    }, ms / 2);
    this.heartbeatTimer.unref();
  }

  private async releaseChannels(): Promise<void> {
    const channels = [...this.channels.values()];
    this.channels.clear();
    for (const ch of channels) {
      ch.open = false;
      await ch.release();
    }
  }

  /** The socket is gone: channels give their messages back, exclusive queues are deleted. */
  private async cleanup(): Promise<void> {
    this.state = 'closed';
    clearInterval(this.heartbeatTimer);
    clearTimeout(this.closeTimer);
    await this.releaseChannels().catch(() => undefined);
    for (const queueId of this.registry.ownedBy(this.id)) {
      const queue = await this.opts.engine.store.queues.byId(queueId).catch(() => undefined);
      this.registry.queueDeleted(queueId);
      if (queue && this.broker) await this.broker.deleteQueue(queue, false).catch(() => undefined);
    }
  }
}

/** PLAIN (`[authzid] NUL user NUL password`) or AMQPLAIN (a table with LOGIN and PASSWORD). */
function credentials(mechanism: string, response: Buffer): { user: string; password: string } | undefined {
  if (mechanism === 'PLAIN') {
    const parts = response.toString('utf8').split('\0');
    if (parts.length !== 3) return undefined;
    return { user: parts[1]!, password: parts[2]! };
  }
  if (mechanism === 'AMQPLAIN') {
    const w = Buffer.alloc(4 + response.length);
    w.writeUInt32BE(response.length, 0);
    response.copy(w, 4);
    let t: FieldTable;
    try {
      t = new Reader(w).table();
    } catch {
      return undefined;
    }
    const user = strOf(t.get('LOGIN'));
    const password = strOf(t.get('PASSWORD'));
    return user === undefined || password === undefined ? undefined : { user, password };
  }
  return undefined;
}

function serverProperties(): FieldTable {
  const capabilities = Object.fromEntries(
    ['publisher_confirms', 'exchange_exchange_bindings', 'basic.nack', 'consumer_cancel_notify', 'per_consumer_qos', 'authentication_failure_close']
      .map((c) => [c, field.bool(true)]),
  );
  return new Map([
    ['product', field.str('Redrive')],
    ['platform', field.str(`Node.js ${process.version}`)],
    ['information', field.str('An SQS-compatible message queue that speaks AMQP 0-9-1: docs/amqp.md')],
    ['capabilities', field.table(capabilities)],
  ]);
}

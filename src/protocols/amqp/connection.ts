import type { Socket } from 'node:net';
import { AmqpBroker } from '../../engine/amqp/broker.js';
import { AmqpError, CODES, amqpErrors } from '../../engine/kernel/amqp-errors.js';
import type { Engine } from '../../engine/engine.js';
import type { Channel, ChannelHost } from './channel.js';
import { channelFrame, releaseChannels } from './channels.js';
import { FRAME_HEARTBEAT, FRAME_METHOD, FrameParser, methodFrame, PROTOCOL_HEADER, type Frame } from './frames.js';
import { answerUnknownProtocol, capability, connectionStart, type SignIn } from './handshake.js';
import { Holdings, type AmqpUsage } from './limits.js';
import { Flow } from './flow.js';
import { startHeartbeat } from './heartbeat.js';
import type { AmqpRegistry } from './registry.js';
import { decodeMethod, type Method } from './spec.js';
import { TransactionBudget } from './transaction.js';

export interface ConnectionOptions {
  engine: Engine;
  registry: AmqpRegistry;
  signIn: SignIn;
  /** The limits, and what all connections hold together. */
  usage: AmqpUsage;
  /** Seconds the server proposes (RabbitMQ's default: 60). */
  heartbeat?: number;
  log: { warn(obj: object, msg?: string): void };
}

const FRAME_MAX = 131_072;
const MIN_FRAME_MAX = 4096;
/** Bytes buffered for the socket past which consumers wait for it to drain. */
const HIGH_WATER = 1 << 20;
/** How long one connection's frames may run in one turn of the event loop. */
const FRAME_SLICE_MS = 10;

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
  state: State = 'header';
  private parser = new FrameParser(MIN_FRAME_MAX);
  readonly channels = new Map<number, Channel>();
  /** Negotiated at connection.tune-ok: the highest channel number the client may open. */
  channelMax: number;
  private heartbeatTimer?: NodeJS.Timeout;
  private lastReceived = Date.now();
  private lastSent = Date.now();
  private closeTimer?: NodeJS.Timeout;
  /** Until connection.open-ok: the handshake's timer and the bytes received so far. */
  private handshake?: { timer: NodeJS.Timeout; bytes: number; end: () => void };
  login?: { account: string; user: string; counted: boolean };
  /** What live-view.ts shows: when it connected, what the client said it is, bytes each way. */
  readonly stats = {
    name: '',
    connectedAt: Date.now(),
    clientProperties: undefined as unknown,
    recvOct: 0,
    sendOct: 0,
    heartbeat: 0,
  };
  /** What this connection holds of the limited resources. */
  readonly holdings: Holdings;
  readonly transactions = new TransactionBudget();
  /** The client announced consumer_cancel_notify: a consumer whose queue goes gets basic.cancel. */
  hearsCancel = false;
  private readonly flow: Flow;
  /** Settles once the socket is gone and its messages and exclusive queues are dealt with. */
  readonly done: Promise<void>;

  constructor(
    readonly socket: Socket,
    private readonly opts: ConnectionOptions,
  ) {
    const limits = opts.usage.limits;
    this.stats.name = `${socket.remoteAddress}:${socket.remotePort} -> ${socket.localAddress}:${socket.localPort}`;
    this.channelMax = limits.channelMax;
    this.holdings = new Holdings(opts.usage, this.channels);
    this.flow = new Flow(socket, opts.usage, (name, args) => this.send0(name, args));
    this.handshake = {
      timer: setTimeout(() => this.handshakeExpired(), limits.handshakeTimeoutMs),
      bytes: 0,
      end: opts.usage.startHandshake(socket.remoteAddress),
    };
    socket.setNoDelay(true);
    socket.on('data', (chunk) => this.onData(chunk));
    socket.on('error', () => socket.destroy());
    this.done = new Promise((resolve) => socket.on('close', () => void this.cleanup().finally(resolve)));
  }

  get maxMessageBytes(): number {
    return this.opts.usage.limits.maxMessageBytes;
  }

  get registry(): AmqpRegistry {
    return this.opts.registry;
  }

  write(frames: Buffer[]): void {
    if (this.socket.destroyed || this.state === 'closed') return;
    this.lastSent = Date.now();
    if (frames.length === 1) {
      this.stats.sendOct += frames[0]!.length;
      this.socket.write(frames[0]!);
      return;
    }
    this.socket.cork();
    for (const f of frames) {
      this.stats.sendOct += f.length;
      this.socket.write(f);
    }
    this.socket.uncork();
  }

  backlog(delta: number, bytes = 0): void {
    this.flow.backlog(delta, bytes);
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
    // After close / close-ok, what the peer still sends is read and dropped (as RabbitMQ
    // does), so its last writes are not answered with a reset.
    if (this.state === 'closed') return;
    this.lastReceived = Date.now();
    this.stats.recvOct += chunk.length;
    if (this.handshake && (this.handshake.bytes += chunk.length) > this.opts.usage.limits.handshakeMaxBytes) {
      this.opts.log.warn(
        { connection: this.id, address: this.socket.remoteAddress },
        'AMQP connection sent too much before signing in: closing it',
      );
      this.socket.destroy();
      return;
    }
    this.parser.push(chunk);
    if (this.state === 'header') {
      const header = this.parser.takeRaw(8);
      if (!header) return;
      if (!header.equals(PROTOCOL_HEADER)) {
        this.state = 'closed';
        this.parser = new FrameParser(MIN_FRAME_MAX);
        return answerUnknownProtocol(this.socket);
      }
      this.state = 'start-ok';
      this.send0('connection.start', connectionStart());
    }
    this.runFrames();
  }

  /**
   * Runs the frames received for at most FRAME_SLICE_MS of one turn of the event loop; the
   * rest wait (the socket unread) until other sockets have had their turn, so one peer's
   * expensive frames cannot hold the server for long.
   */
  private runFrames(): void {
    const until = performance.now() + FRAME_SLICE_MS;
    try {
      for (let f = this.parser.next(); f && (this.state as State) !== 'closed'; f = this.parser.next()) {
        this.onFrame(f);
        if (performance.now() > until) return this.flow.yieldTurn(() => this.runFrames());
      }
    } catch (e) {
      this.fail(e instanceof AmqpError ? e : amqpErrors.frameError(String((e as Error).message)));
    }
  }

  private send0(name: Parameters<typeof methodFrame>[1], args?: Record<string, unknown>): void {
    this.write([methodFrame(0, name, args)]);
  }

  private onFrame(f: Frame): void {
    if (this.state === 'closing') {
      if (f.type === FRAME_METHOD && f.channel === 0) {
        const m = decodeMethod(f.payload);
        if (m.name === 'connection.close') this.send0('connection.close-ok');
        // The peer's close-ok ends the exchange: RabbitMQ closes the socket then.
        if (m.name === 'connection.close-ok') this.socket.end();
        if (m.name === 'connection.close' || m.name === 'connection.close-ok') this.finish();
      }
      return;
    }
    if (f.type === FRAME_HEARTBEAT) {
      if (f.channel !== 0) throw amqpErrors.unexpectedFrame('heartbeat frame on a channel other than 0');
      return;
    }
    if (this.state !== 'ready') {
      if (f.type !== FRAME_METHOD || f.channel !== 0)
        throw amqpErrors.unexpectedFrame('frame before the connection is open');
      return this.negotiate(decodeMethod(f.payload));
    }
    if (f.channel === 0) {
      if (f.type !== FRAME_METHOD) throw amqpErrors.unexpectedFrame('content frame on channel 0');
      return this.connectionMethod(decodeMethod(f.payload));
    }
    channelFrame(this, f);
  }

  private negotiate(m: Method): void {
    const expected = { 'start-ok': 'connection.start-ok', 'tune-ok': 'connection.tune-ok', open: 'connection.open' }[
      this.state as 'open'
    ];
    if (m.name === 'connection.close') {
      this.send0('connection.close-ok');
      return this.finish();
    }
    if (m.name !== expected) throw amqpErrors.commandInvalid(`expected '${expected}', got '${m.name}'`);
    const a = m.args;
    if (m.name === 'connection.start-ok') {
      const login = this.opts.signIn.login(String(a.mechanism), a.response as Buffer, this.socket.remoteAddress);
      if (!login) {
        throw new AmqpError(
          CODES.ACCESS_REFUSED,
          `Login was refused using authentication mechanism ${String(a.mechanism)}. For details see the broker logfile.`,
          0,
          0,
          true,
        );
      }
      this.login = { ...login, counted: false };
      this.stats.clientProperties = a.clientProperties;
      this.flow.hearsBlocked = capability(a.clientProperties, 'connection.blocked');
      this.hearsCancel = capability(a.clientProperties, 'consumer_cancel_notify');
      this.broker = new AmqpBroker(this.opts.engine, login.account);
      this.state = 'tune-ok';
      this.send0('connection.tune', {
        channelMax: this.opts.usage.limits.channelMax,
        frameMax: FRAME_MAX,
        heartbeat: this.opts.heartbeat ?? 60,
      });
    } else if (m.name === 'connection.tune-ok') {
      const frameMax = Number(a.frameMax) || FRAME_MAX;
      if (frameMax < MIN_FRAME_MAX || frameMax > FRAME_MAX) {
        throw new AmqpError(CODES.NOT_ALLOWED, `frame_max=${frameMax} is outside ${MIN_FRAME_MAX}..${FRAME_MAX}`);
      }
      this.frameMax = frameMax;
      this.parser.frameMax = frameMax;
      const channelMax = this.opts.usage.limits.channelMax;
      this.channelMax = Number(a.channelMax) === 0 ? channelMax : Math.min(Number(a.channelMax), channelMax);
      this.stats.heartbeat = Number(a.heartbeat);
      this.heartbeatTimer = startHeartbeat(Number(a.heartbeat), {
        lastReceived: () => this.lastReceived,
        lastSent: () => this.lastSent,
        write: (frames) => this.write(frames),
        gone: () => {
          this.opts.log.warn({ connection: this.id }, 'AMQP connection missed heartbeats: closing it');
          this.socket.destroy();
        },
      });
      this.state = 'open';
    } else {
      if (a.virtualHost !== '/') throw new AmqpError(CODES.NOT_ALLOWED, `vhost ${String(a.virtualHost)} not found`);
      // RabbitMQ checks its connection limits here too.
      const refused = this.opts.usage.openConnection(this.login!.user);
      if (refused) {
        this.opts.log.warn(
          { connection: this.id, user: this.login!.user, address: this.socket.remoteAddress },
          `AMQP connection refused: ${refused}`,
        );
        throw new AmqpError(CODES.NOT_ALLOWED, refused);
      }
      this.login!.counted = true;
      this.flow.watchAlarm();
      this.endHandshake();
      this.state = 'ready';
      this.send0('connection.open-ok');
    }
  }

  private endHandshake(): void {
    if (!this.handshake) return;
    clearTimeout(this.handshake.timer);
    this.handshake.end();
    this.handshake = undefined;
  }

  /** RabbitMQ's handshake_timeout: a peer that has not opened the connection in time is dropped. */
  private handshakeExpired(): void {
    this.opts.log.warn(
      { connection: this.id, address: this.socket.remoteAddress, state: this.state },
      'AMQP handshake timed out: closing the connection',
    );
    this.socket.destroy();
  }

  private connectionMethod(m: Method): void {
    switch (m.name) {
      case 'connection.close':
        this.send0('connection.close-ok');
        void releaseChannels(this.channels);
        return this.finish();
      case 'connection.close-ok':
      case 'connection.blocked':
      case 'connection.unblocked':
        return;
      case 'connection.update-secret': {
        const secret = (m.args.newSecret as Buffer).toString('utf8');
        if (!this.opts.signIn.updateSecret(this.login!.user, secret, this.socket.remoteAddress)) {
          throw new AmqpError(
            CODES.NOT_ALLOWED,
            'New secret was refused by one of the backends',
            m.classId,
            m.methodId,
          );
        }
        return this.send0('connection.update-secret-ok');
      }
      default:
        throw new AmqpError(CODES.CHANNEL_ERROR, `${m.name} on channel 0`, m.classId, m.methodId);
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
    this.write([
      methodFrame(0, 'connection.close', {
        replyCode: err.code,
        replyText: err.replyText,
        classId: err.classId,
        methodId: err.methodId,
      }),
    ]);
    // A peer that never answers close-ok is dropped.
    this.closeTimer = setTimeout(() => this.socket.destroy(), this.opts.usage.limits.closeTimeoutMs);
    void releaseChannels(this.channels);
  }

  /**
   * After close-ok (sent or received): as RabbitMQ, the server writes nothing more, and
   * reads and drops what the peer still sends until it closes the socket, or for the
   * close timeout. Dropping the socket at once would answer the peer's last writes (a
   * client's queued publishes, sent after its close) with a reset, and the client would
   * lose the close-ok with it.
   */
  private finish(): void {
    this.state = 'closed';
    this.parser = new FrameParser(MIN_FRAME_MAX);
    clearTimeout(this.closeTimer);
    this.closeTimer = setTimeout(() => this.socket.destroy(), this.opts.usage.limits.closeTimeoutMs);
  }

  /** The socket is gone: channels give their messages back, exclusive queues are deleted. */
  private async cleanup(): Promise<void> {
    this.state = 'closed';
    this.parser = new FrameParser(MIN_FRAME_MAX);
    clearInterval(this.heartbeatTimer);
    clearTimeout(this.closeTimer);
    this.endHandshake();
    this.flow.stop();
    if (this.login?.counted) this.opts.usage.closeConnection(this.login.user);
    this.login = undefined;
    await releaseChannels(this.channels).catch(() => undefined);
    this.holdings.release();
    for (const queueId of this.registry.ownedBy(this.id)) {
      const queue = await this.opts.engine.store.queues.byId(queueId).catch(() => undefined);
      this.registry.queueDeleted(queueId);
      if (queue && this.broker) await this.broker.deleteQueue(queue, false).catch(() => undefined);
    }
  }
}

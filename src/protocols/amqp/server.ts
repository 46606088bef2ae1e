import { createServer, type Server, type Socket } from 'node:net';
import type { Engine } from '../../engine/engine.js';
import { Connection } from './connection.js';
import { signIn } from './handshake.js';
import { AmqpUsage, DEFAULT_AMQP_LIMITS, type AmqpLimits } from './limits.js';
import { CODES, AmqpError } from '../../engine/kernel/amqp-errors.js';
import { connectionName, connectionView, type AmqpConnectionView, type AmqpLiveState } from './live-view.js';
import { authenticator } from '../../auth/password.js';
import type { Credential } from '../../auth/credentials.js';
import { AuthThrottle } from '../../auth/throttle.js';
import { QueueExpiry } from './queue-expiry.js';
import { AmqpRegistry } from './registry.js';
import { Amqp10Listener } from '../amqp10/listener.js';
import { byProtocolHeader } from '../amqp10/protocol-switch.js';

export interface AmqpServerOptions {
  engine: Engine;
  host: string;
  port: number;
  /** The account of guest/guest when no credentials are configured. */
  accountId: string;
  /** Access key id → secret and account: the user name and password of PLAIN sign-in. */
  credentials?: ReadonlyMap<string, Credential>;
  heartbeat?: number;
  /** docs/security.md; RabbitMQ-like defaults for those not given. */
  limits?: Partial<AmqpLimits>;
  log: { info(obj: object, msg?: string): void; warn(obj: object, msg?: string): void };
  /** The server's one failure throttle, shared with the HTTP sign-ins; absent: one of its own on the engine's clock. */
  throttle?: AuthThrottle;
}

/** The AMQP 0-9-1 listener (`--amqp-port`): one Connection per socket, on the server's engine. */
export class AmqpServer implements AmqpLiveState {
  private readonly server: Server;
  private readonly sockets = new Map<Socket, Connection>();
  readonly registry: AmqpRegistry;
  private readonly expiry: QueueExpiry;
  readonly usage: AmqpUsage;
  private lastTurnedAway = 0;
  private readonly stopWatchingDeletes: () => void;
  /** AMQP 1.0 on the same port, chosen by the protocol header (src/protocols/amqp10). */
  private readonly amqp10: Amqp10Listener;

  constructor(private readonly opts: AmqpServerOptions) {
    this.registry = new AmqpRegistry(opts.engine.clock);
    // Consumers wait in the engine's long-poll pool: they may take half of it, so SQS long polls keep the rest.
    const consumerPool = Math.floor(opts.engine.maxLongPolls / 2);
    // A queue deleted over SQS cancels its consumers here too, as queue.delete does.
    this.stopWatchingDeletes = opts.engine.onQueueDeleted((id) => this.registry.queueDeleted(id));
    const usage = (this.usage = new AmqpUsage({ ...DEFAULT_AMQP_LIMITS, ...opts.limits }, consumerPool));
    const login = signIn(
      authenticator(opts),
      opts.throttle ?? new AuthThrottle({}, () => opts.engine.clock.now()),
      opts.log,
      opts.credentials !== undefined,
    );
    this.amqp10 = new Amqp10Listener({
      engine: opts.engine,
      registry: this.registry,
      signIn: login,
      anonymous: opts.credentials === undefined,
      usage,
      heartbeat: opts.heartbeat,
      log: opts.log,
    });
    this.server = createServer((socket) => {
      // Before a peer has said a word, there is no protocol refusal to give it: a socket
      // over the handshake limit (in all, or of its address) is closed at once, so
      // unauthenticated peers hold at most that many sockets (each for the handshake
      // timeout at most), and one address cannot take them all.
      if (!usage.mayHandshake(socket.remoteAddress)) {
        socket.on('error', () => undefined);
        socket.destroy();
        this.turnedAway();
        return;
      }
      byProtocolHeader(socket, usage, (amqp10) => {
        if (amqp10) return this.amqp10.accept(socket);
        const c = new Connection(socket, {
          engine: opts.engine,
          registry: this.registry,
          signIn: login,
          usage,
          heartbeat: opts.heartbeat,
          log: opts.log,
        });
        this.sockets.set(socket, c);
        void c.done.then(() => this.sockets.delete(socket));
      });
    });
    this.expiry = new QueueExpiry(opts.engine, this.registry, opts.log);
  }

  /** Logged at most once a second, so a flood does not flood the log too. */
  private turnedAway(): void {
    const now = Date.now();
    if (now - this.lastTurnedAway < 1000) return;
    this.lastTurnedAway = now;
    this.opts.log.warn(
      {
        handshakes: this.usage.handshakes,
        limit: this.usage.limits.maxHandshakes,
        perAddress: this.usage.limits.maxHandshakesPerAddress,
      },
      'AMQP connection turned away: too many connections still in their handshake (in all, or from its address)',
    );
  }

  connections(accountId: string): AmqpConnectionView[] {
    const out: AmqpConnectionView[] = [];
    for (const c of this.sockets.values()) {
      const v = c.login?.account === accountId ? connectionView(c) : undefined;
      if (v) out.push(v);
    }
    return [...out, ...this.amqp10.views(accountId)];
  }

  closeConnection(accountId: string, name: string, reason: string): boolean {
    const c = [...this.sockets.values()].find((x) => x.login?.account === accountId && connectionName(x) === name);
    if (!c) return this.amqp10.closeConnection(accountId, name, reason);
    c.fail(new AmqpError(CODES.CONNECTION_FORCED, reason, 0, 0, true));
    return true;
  }

  /** Signed-in connections by protocol, and AMQP 1.0 links (/metrics). */
  counts(): { amqp091: number; amqp10: number; amqp10Links: number } {
    let amqp091 = 0;
    for (const c of this.sockets.values()) if (c.login && c.state === 'ready') amqp091++;
    return { amqp091, ...this.amqp10.counts() };
  }

  /** Listens; resolves with the port (useful with port 0). */
  async listen(): Promise<number> {
    await this.expiry.start();
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.opts.port, this.opts.host, () => {
        this.server.off('error', reject);
        const address = this.server.address();
        const port = typeof address === 'object' && address ? address.port : this.opts.port;
        this.opts.log.info({ amqpPort: port, host: this.opts.host }, 'AMQP listening');
        resolve(port);
      });
    });
  }

  /** Stops accepting and ends every connection (their unacknowledged messages go back). */
  async close(): Promise<void> {
    this.expiry.stop();
    this.stopWatchingDeletes();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    const done = [...this.sockets].map(([s, c]) => {
      s.destroy();
      return c.done;
    });
    await Promise.all([closed, ...done, this.amqp10.close()]);
  }
}

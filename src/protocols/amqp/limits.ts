import { AmqpError, CODES } from '../../engine/amqp/errors.js';

/**
 * The AMQP listener's resource limits (docs/security.md): what one peer may make the
 * server hold before it signs in, and what one connection, one user and all connections
 * together may hold after. Each has a `redrive serve` flag (src/cli/amqp-flags.ts).
 */
export interface AmqpLimits {
  /** RabbitMQ's `handshake_timeout`: from accept to connection.open-ok; the socket is dropped after it. */
  handshakeTimeoutMs: number;
  /** Bytes a peer may send before it has signed in (its protocol header and connection.start-ok). */
  handshakeMaxBytes: number;
  /** Sockets still in the handshake at once; a socket accepted over it is closed at once. */
  maxHandshakes: number;
  /** RabbitMQ's `channel_max`, proposed in connection.tune. */
  channelMax: number;
  /** Open (signed-in) connections in total; the next connection.open is refused with 530. */
  maxConnections: number;
  /** Open connections of one user; the next connection.open of that user is refused with 530. */
  maxConnectionsPerUser: number;
  /** Bytes of messages being published (body frames received, message not complete) per connection; over: 506. */
  maxUnfinishedBytes: number;
  /** The same, summed over all connections. */
  maxUnfinishedBytesTotal: number;
  /**
   * Bytes of complete messages waiting to be stored, over all connections: RabbitMQ's
   * memory alarm for AMQP publishes. Over it, connections that publish are blocked
   * (connection.blocked, and their sockets are not read) until it is back under half.
   */
  maxQueuedBytesTotal: number;
  /** Deliveries a connection holds unacknowledged; past it its consumers wait for acks, basic.get is refused with 406. */
  maxUnacked: number;
  /** RabbitMQ's `max_message_size`: a larger publish closes its channel with 406. At most maxUnfinishedBytes. */
  maxMessageBytes: number;
  /** After close / close-ok, how long the server keeps reading (and discarding) before it drops a peer that does not close. */
  closeTimeoutMs: number;
}

export const DEFAULT_AMQP_LIMITS: AmqpLimits = {
  handshakeTimeoutMs: 10_000,
  handshakeMaxBytes: 64 * 1024,
  maxHandshakes: 256,
  channelMax: 2047,
  maxConnections: 4096,
  maxConnectionsPerUser: 1024,
  maxUnfinishedBytes: 64 * 1024 * 1024,
  maxUnfinishedBytesTotal: 512 * 1024 * 1024,
  maxUnacked: 100_000,
  maxMessageBytes: 16 * 1024 * 1024,
  maxQueuedBytesTotal: 256 * 1024 * 1024,
  closeTimeoutMs: 5_000,
};

/** A refusal of one of the counters below: the reply text, RabbitMQ's where it has one. */
export type Refusal = string | undefined;

/**
 * What all connections of one listener hold together: sockets in the handshake, open
 * connections per user, and bytes of unfinished publishes. Each connection takes and
 * gives back its own share.
 */
export class AmqpUsage {
  handshakes = 0;
  unfinishedBytes = 0;
  /** Set while the bytes waiting to be stored are over maxQueuedBytesTotal (until under half). */
  alarm = false;
  private queuedBytes = 0;
  private readonly alarmListeners = new Set<() => void>();
  private open = 0;
  private readonly perUser = new Map<string, number>();

  constructor(readonly limits: AmqpLimits) {}

  /** Takes an open-connection slot for `user`, or says why not (RabbitMQ's texts). */
  openConnection(user: string): Refusal {
    const mine = this.perUser.get(user) ?? 0;
    if (mine >= this.limits.maxConnectionsPerUser) {
      return `Connection refused for user '${user}': user connection limit (${this.limits.maxConnectionsPerUser}) is reached`;
    }
    if (this.open >= this.limits.maxConnections) {
      return `access to vhost '/' refused for user '${user}': connection limit (${this.limits.maxConnections}) is reached`;
    }
    this.open++;
    this.perUser.set(user, mine + 1);
    return undefined;
  }

  /** Bytes of complete messages waiting to be stored, taken or (negative) given back. */
  queued(delta: number): void {
    this.queuedBytes += delta;
    const max = this.limits.maxQueuedBytesTotal;
    const on = this.alarm ? this.queuedBytes > max / 2 : this.queuedBytes > max;
    if (on === this.alarm) return;
    this.alarm = on;
    for (const l of this.alarmListeners) l();
  }

  /** Calls `listener` when the alarm is set or cleared; returns how to stop. */
  onAlarm(listener: () => void): () => void {
    this.alarmListeners.add(listener);
    return () => this.alarmListeners.delete(listener);
  }

  closeConnection(user: string): void {
    this.open--;
    const left = (this.perUser.get(user) ?? 1) - 1;
    if (left > 0) this.perUser.set(user, left);
    else this.perUser.delete(user);
  }
}

/**
 * What one connection holds: bytes of unfinished publishes (over its limit or the
 * server's, the connection is closed with 506 RESOURCE_ERROR) and unacknowledged
 * deliveries (past the limit its consumers wait for acks).
 */
export class Holdings {
  private unfinished = 0;
  private waiters: (() => void)[] = [];

  constructor(
    private readonly usage: AmqpUsage,
    private readonly channels: ReadonlyMap<number, { readonly unacked: ReadonlyMap<bigint, unknown> }>,
  ) {}

  /** Bytes of unfinished publishes taken (or, negative, given back); throws over a limit. */
  holdContent(delta: number): void {
    this.unfinished += delta;
    this.usage.unfinishedBytes += delta;
    if (delta <= 0) return;
    const { maxUnfinishedBytes, maxUnfinishedBytesTotal } = this.usage.limits;
    if (this.unfinished > maxUnfinishedBytes) {
      throw new AmqpError(
        CODES.RESOURCE_ERROR,
        `unfinished messages on this connection exceed ${maxUnfinishedBytes} bytes`,
        60,
        40,
      );
    }
    if (this.usage.unfinishedBytes > maxUnfinishedBytesTotal) {
      throw new AmqpError(
        CODES.RESOURCE_ERROR,
        `unfinished messages on the server exceed ${maxUnfinishedBytesTotal} bytes`,
        60,
        40,
      );
    }
  }

  /** Deliveries the connection may still hold unacknowledged. */
  unackedRoom(): number {
    let held = 0;
    for (const ch of this.channels.values()) held += ch.unacked.size;
    return this.usage.limits.maxUnacked - held;
  }

  /** Resolves once a delivery of the connection is settled (or the connection ends). */
  roomChanged(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Deliveries were settled: consumers waiting for room check again. */
  settled(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  /** The connection is gone: everything it held is given back. */
  release(): void {
    this.holdContent(-this.unfinished);
    this.settled();
  }
}

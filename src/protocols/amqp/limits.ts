import { amqpErrors, AmqpError, CODES } from '../../engine/kernel/amqp-errors.js';
import { addressKey } from '../../auth/throttle.js';

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
  /** The same from one client address (an IPv6 one by its /64), so one host cannot take them all. */
  maxHandshakesPerAddress: number;
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
  /** Consumers of one channel (RabbitMQ's consumer_max_per_channel); basic.consume over it: 530. */
  maxConsumersPerChannel: number;
  /** Consumers of one account over all its connections; basic.consume over it: 406. */
  maxConsumersPerAccount: number;
  /** Bindings of one account (the engine counts them: binding-quota.ts); queue.bind / exchange.bind over it: 406. */
  maxBindingsPerAccount: number;
  /** Bindings from one exchange; over it: 406. */
  maxBindingsPerExchange: number;
  /** RabbitMQ's `max_message_size`: a larger publish closes its channel with 406. At most maxUnfinishedBytes. */
  maxMessageBytes: number;
  /** After close / close-ok, how long the server keeps reading (and discarding) before it drops a peer that does not close. */
  closeTimeoutMs: number;
}

export const DEFAULT_AMQP_LIMITS: AmqpLimits = {
  handshakeTimeoutMs: 10_000,
  handshakeMaxBytes: 64 * 1024,
  maxHandshakes: 256,
  maxHandshakesPerAddress: 64,
  channelMax: 2047,
  maxConnections: 4096,
  maxConnectionsPerUser: 1024,
  maxUnfinishedBytes: 64 * 1024 * 1024,
  maxUnfinishedBytesTotal: 512 * 1024 * 1024,
  maxUnacked: 100_000,
  maxMessageBytes: 16 * 1024 * 1024,
  maxQueuedBytesTotal: 256 * 1024 * 1024,
  closeTimeoutMs: 5_000,
  maxConsumersPerChannel: 1024,
  maxConsumersPerAccount: 2000,
  maxBindingsPerAccount: 10_000,
  maxBindingsPerExchange: 1_000,
};

/** A refusal of one of the counters below: the reply text, RabbitMQ's where it has one. */
export type Refusal = string | undefined;

/** Counts per key (an address, an account); each add gives back how to take it away. */
class Tally {
  private readonly counts = new Map<string, number>();

  of(key: string): number {
    return this.counts.get(key) ?? 0;
  }

  add(key: string): () => void {
    this.counts.set(key, this.of(key) + 1);
    return () => {
      const left = this.of(key) - 1;
      if (left > 0) this.counts.set(key, left);
      else this.counts.delete(key);
    };
  }
}

/**
 * What all connections of one listener hold together: sockets in the handshake, open
 * connections per user, and bytes of unfinished publishes. Each connection takes and
 * gives back its own share.
 */
export class AmqpUsage {
  handshakes = 0;
  unfinishedBytes = 0;
  /** Consumers of all connections: each waits in the engine's long-poll pool. */
  consumers = 0;
  private readonly consumersPerAccount = new Tally();
  private readonly handshakesPerAddress = new Tally();
  /** Set while the bytes waiting to be stored are over maxQueuedBytesTotal (until under half). */
  alarm = false;
  private queuedBytes = 0;
  private readonly alarmListeners = new Set<() => void>();
  private open = 0;
  private readonly perUser = new Map<string, number>();

  /**
   * `consumerPool`: how many consumers may wait in the engine's long-poll pool at once, the
   * share of it that leaves the rest to SQS long polls.
   */
  constructor(
    readonly limits: AmqpLimits,
    readonly consumerPool = Number.POSITIVE_INFINITY,
  ) {}

  /** Whether a socket from `address` may start its handshake (under the total and its address's share). */
  mayHandshake(address: string | undefined): boolean {
    const mine = this.handshakesPerAddress.of(addressKey(address ?? ''));
    return this.handshakes < this.limits.maxHandshakes && mine < this.limits.maxHandshakesPerAddress;
  }

  /** A socket from `address` starts its handshake; returns how to end it. */
  startHandshake(address: string | undefined): () => void {
    this.handshakes++;
    const end = this.handshakesPerAddress.add(addressKey(address ?? ''));
    return () => {
      this.handshakes--;
      end();
    };
  }

  /**
   * Takes a consumer slot for the account, or throws RabbitMQ's refusal: past the account's
   * quota or the server's share of the long-poll pool, 406 on the channel.
   */
  takeConsumer(accountId: string): () => void {
    if (this.consumersPerAccount.of(accountId) >= this.limits.maxConsumersPerAccount)
      throw amqpErrors.precondition(`consumer limit in vhost '/' (${this.limits.maxConsumersPerAccount}) is reached`);
    if (this.consumers >= this.consumerPool)
      throw amqpErrors.precondition(`the server's consumer limit (${this.consumerPool}) is reached`);
    this.consumers++;
    const end = this.consumersPerAccount.add(accountId);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.consumers--;
      end();
    };
  }

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

  /**
   * A consumer slot for a new consumer on a channel that has `onChannel` already
   * (RabbitMQ's consumer_max_per_channel: 530 NOT_ALLOWED), then the account's and the
   * server's (AmqpUsage.takeConsumer); returns how to give it back.
   */
  takeConsumer(accountId: string, onChannel: number): () => void {
    const max = this.usage.limits.maxConsumersPerChannel;
    if (onChannel >= max)
      throw new AmqpError(CODES.NOT_ALLOWED, `reached maximum (${max}) of consumers per channel`, 60, 20);
    return this.usage.takeConsumer(accountId);
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

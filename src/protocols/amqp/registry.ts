import { amqpErrors } from '../../engine/kernel/amqp-errors.js';
import type { Clock } from '../../engine/kernel/clock.js';
import type { ReplyTarget } from './direct-reply.js';

/** What the registry needs of a consumer: to be told its queue is gone. */
export interface RegisteredConsumer {
  readonly exclusive: boolean;
  /** The queue was deleted: the consumer stops and the client gets basic.cancel. */
  queueDeleted(): void;
}

export interface ExpiringQueue {
  queueId: number;
  accountId: string;
  name: string;
  expiresMs: number;
  usedAt: number;
}

/**
 * This node's AMQP state that is not in the store: the consumers of each queue (for
 * consumer counts, exclusive consumers and auto-delete) and the connection that owns each
 * exclusive queue. Exclusive and auto-delete queues are tied to connections, which live
 * on one node, so this is per node by nature.
 */
export class AmqpRegistry {
  private readonly consumers = new Map<number, Set<RegisteredConsumer>>();
  private readonly owners = new Map<number, number>();
  /** Queues with x-expires: when each was last used (declared, read, consumed). */
  private readonly expiring = new Map<number, ExpiringQueue>();
  /** Direct reply-to: the channels consuming their replies, by reply address. */
  readonly replies = new Map<string, ReplyTarget>();

  /** `clock` is the engine's, so x-expires runs on the time every other rule reads. */
  constructor(private readonly clock: Pick<Clock, 'now'>) {}

  /** Starts (or restarts) the queue's x-expires clock. */
  armExpiry(q: Omit<ExpiringQueue, 'usedAt'>): void {
    this.expiring.set(q.queueId, { ...q, usedAt: this.clock.now() });
  }

  /** The queue was used: its x-expires period starts again. */
  touch(queueId: number): void {
    const e = this.expiring.get(queueId);
    if (e) e.usedAt = this.clock.now();
  }

  /** Queues unused (no consumer, no declare or get) for their whole x-expires period. */
  expired(): ExpiringQueue[] {
    const now = this.clock.now();
    return [...this.expiring.values()].filter(
      (e) => this.consumerCount(e.queueId) === 0 && now - e.usedAt >= e.expiresMs,
    );
  }

  consumerCount(queueId: number): number {
    return this.consumers.get(queueId)?.size ?? 0;
  }

  addConsumer(queueId: number, queueName: string, c: RegisteredConsumer): void {
    const set = this.consumers.get(queueId) ?? new Set();
    if ([...set].some((o) => o.exclusive) || (c.exclusive && set.size > 0)) {
      throw amqpErrors.accessRefused(`queue '${queueName}' in vhost '/' in exclusive use`);
    }
    set.add(c);
    this.consumers.set(queueId, set);
  }

  /** Removes the consumer; returns how many the queue has left. */
  removeConsumer(queueId: number, c: RegisteredConsumer): number {
    const set = this.consumers.get(queueId);
    if (!set) return 0;
    set.delete(c);
    // The x-expires period of a queue runs from when its last consumer left.
    if (set.size === 0) this.touch(queueId);
    if (set.size === 0) this.consumers.delete(queueId);
    return set.size;
  }

  /** The queue is gone: its consumers are cancelled and it has no owner. */
  queueDeleted(queueId: number): void {
    const set = this.consumers.get(queueId);
    this.consumers.delete(queueId);
    this.owners.delete(queueId);
    this.expiring.delete(queueId);
    for (const c of set ?? []) c.queueDeleted();
  }

  /** Throws 405 if the queue is exclusive to another connection. */
  checkOwner(queueId: number, queueName: string, connectionId: number): void {
    const owner = this.owners.get(queueId);
    if (owner !== undefined && owner !== connectionId) throw amqpErrors.locked(queueName);
  }

  setOwner(queueId: number, connectionId: number): void {
    this.owners.set(queueId, connectionId);
  }

  /** The exclusive queues a connection owns (deleted when it closes). */
  ownedBy(connectionId: number): number[] {
    return [...this.owners].filter(([, c]) => c === connectionId).map(([q]) => q);
  }
}

import { amqpErrors } from '../../engine/kernel/amqp-errors.js';
import type { QueuedPublish } from './queued-publish.js';
import type { Unacked } from './unacked.js';

export type Settle = 'ack' | 'requeue' | 'reject';

/** A settle held by a transaction: the deliveries it took off the channel's unacked list, by tag. */
export interface HeldSettle {
  how: Settle;
  picked: [bigint, Unacked][];
}

/** Bytes of messages all transactions of one connection may hold (as much as its unfinished publishes). */
const MAX_CONNECTION_BYTES = 64 * 1024 * 1024;
/** The same over every connection of the server. */
const MAX_SERVER_BYTES = 512 * 1024 * 1024;
/** Publishes and settles one transaction may hold. */
const MAX_ITEMS = 65_536;

let serverBytes = 0;

/** What the transactions of one connection hold: bytes of publishes not yet committed. */
export class TransactionBudget {
  bytes = 0;

  take(n: number): void {
    const over =
      this.bytes + n > MAX_CONNECTION_BYTES
        ? `${MAX_CONNECTION_BYTES} bytes on this connection`
        : serverBytes + n > MAX_SERVER_BYTES
          ? `${MAX_SERVER_BYTES} bytes on the server`
          : undefined;
    if (over) throw amqpErrors.precondition(`uncommitted publishes would exceed ${over}: commit more often`);
    this.bytes += n;
    serverBytes += n;
  }

  give(n: number): void {
    this.bytes -= n;
    serverBytes -= n;
  }
}

/**
 * A channel's transaction (tx.select), with RabbitMQ's semantics: publishes and settles
 * (ack, nack, reject) are held, in order, until tx.commit stores the publishes and then
 * applies the settles; tx.rollback drops the publishes and puts the settled deliveries
 * back on the unacknowledged list. Nothing is stored before the commit, so a channel that
 * closes first leaves nothing behind (its held deliveries are requeued with the rest).
 */
export class Transaction {
  private publishes: QueuedPublish[] = [];
  private settles: HeldSettle[] = [];
  private bytes = 0;
  private items = 0;

  constructor(private readonly budget: TransactionBudget) {}

  /**
   * Holds a batch of publishes; the first that `check` (its exchange) or its assembly
   * found invalid is raised, after those before it, as RabbitMQ raises it at the publish.
   */
  async publish(batch: QueuedPublish[], check: (exchange: string) => Promise<void>): Promise<void> {
    for (const item of batch) {
      if (item.error !== undefined) throw item.error;
      await check(item.publish.content.exchange);
      this.count(item.publish.content.body.length);
      this.publishes.push(item);
    }
  }

  settle(picked: [bigint, Unacked][], how: Settle): void {
    this.count(0);
    this.settles.push({ how, picked });
  }

  /** Everything held, leaving the transaction empty (commit and rollback start the next one). */
  take(): { publishes: QueuedPublish[]; settles: HeldSettle[] } {
    const held = { publishes: this.publishes, settles: this.settles };
    this.publishes = [];
    this.settles = [];
    this.budget.give(this.bytes);
    this.bytes = 0;
    this.items = 0;
    return held;
  }

  private count(bytes: number): void {
    if (++this.items > MAX_ITEMS)
      throw amqpErrors.precondition(`a transaction holds at most ${MAX_ITEMS} publishes and acks: commit more often`);
    this.budget.take(bytes);
    this.bytes += bytes;
  }
}

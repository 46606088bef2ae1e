import type { MoveTaskRecord } from '../store/move-tasks.js';
import type { DeathReason, QueueRecord } from '../kernel/types.js';

/**
 * What the engine reports as it works. Every counter of every surface is derived from
 * these calls and from nothing else: the Prometheus counters of /metrics (src/metrics)
 * and the per-minute activity of GetQueueActivity, which the console's chart and the CLI
 * read (activity-counts.ts). So one event moves the same counters everywhere; which
 * event moves which counter, on which queue, is the table of docs/monitoring.md ("One
 * count per event"), and each method below says its row.
 *
 * Every call comes after the store's operation committed, once, so a retried transaction
 * is never counted twice. Calls are on the hot path: an implementation must be cheap and
 * must not throw.
 */
export interface EngineObserver {
  /**
   * `count` messages stored in the queue by a send: a client's (SQS or AMQP publish) or a
   * redrive's (a move task sends to its destination as SQS's own redrive does). `sizes`
   * (body and attributes) are given for a client's SQS sends. Dead-letter moves are not sends.
   */
  sent(queue: QueueRecord, count: number, sizes?: readonly number[]): void;
  /** FIFO sends answered from the deduplication cache: nothing new was stored. */
  deduplicated(queue: QueueRecord, count: number): void;
  /**
   * `count` messages handed out: by ReceiveMessage, an AMQP delivery, or a redrive (which
   * receives from the queue it empties). 0 is an empty ReceiveMessage call.
   */
  received(queue: QueueRecord, count: number): void;
  /** Messages deleted: DeleteMessage(Batch), DeleteMessagesById, an AMQP ack, or a redrive's delete after its send. */
  deleted(queue: QueueRecord, count: number): void;
  /** A message moved from `from` into the dead-letter queue with id `to`: it left `from` and arrived in `to`. */
  deadLettered(from: QueueRecord, to: number, reason: DeathReason): void;
  /** A message removed for `reason` with no dead-letter queue to go to. */
  dropped(from: QueueRecord, reason: DeathReason): void;
  /** A message whose dead-lettering would have closed a cycle: parked in the cycles queue `to`, or (AMQP) dropped. */
  cycleBroken(from: QueueRecord, reason: DeathReason, to?: number): void;
  /** Dead-letter copies of a message of `from` not made: the copies one event may create were spent. */
  copiesDropped?(from: QueueRecord, reason: DeathReason, count: number): void;
  /** A move task this node drives, after each batch: its status, moved and total counts. */
  moveTask(task: MoveTaskRecord, movedNow: number): void;
  /** An action served: its name, the protocol that carried it, the error code ('' on success). */
  request(action: string, protocol: string, errorCode: string, seconds: number): void;
}

/** The observer when nobody listens: the engine's tests and tools that run no server. */
export const noObserver: EngineObserver = {
  sent() {},
  deduplicated() {},
  received() {},
  deleted() {},
  deadLettered() {},
  dropped() {},
  cycleBroken() {},
  moveTask() {},
  request() {},
};

/** Both observers hear every event, `first` first. */
export function bothObservers(first: EngineObserver, second: EngineObserver): EngineObserver {
  if (first === noObserver) return second;
  return {
    sent: (q, n, sizes) => {
      first.sent(q, n, sizes);
      second.sent(q, n, sizes);
    },
    deduplicated: (q, n) => {
      first.deduplicated(q, n);
      second.deduplicated(q, n);
    },
    received: (q, n) => {
      first.received(q, n);
      second.received(q, n);
    },
    deleted: (q, n) => {
      first.deleted(q, n);
      second.deleted(q, n);
    },
    deadLettered: (from, to, reason) => {
      first.deadLettered(from, to, reason);
      second.deadLettered(from, to, reason);
    },
    dropped: (from, reason) => {
      first.dropped(from, reason);
      second.dropped(from, reason);
    },
    cycleBroken: (from, reason, to) => {
      first.cycleBroken(from, reason, to);
      second.cycleBroken(from, reason, to);
    },
    copiesDropped: (from, reason, n) => {
      first.copiesDropped?.(from, reason, n);
      second.copiesDropped?.(from, reason, n);
    },
    moveTask: (task, moved) => {
      first.moveTask(task, moved);
      second.moveTask(task, moved);
    },
    request: (a, p, c, s) => {
      first.request(a, p, c, s);
      second.request(a, p, c, s);
    },
  };
}

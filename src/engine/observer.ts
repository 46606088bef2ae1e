import type { MoveTaskRecord } from './store/move-tasks.js';
import type { DeathReason, QueueRecord } from './types.js';

/**
 * What the engine reports as it works, for metrics (the server's src/metrics implements
 * it with prom-client; the engine knows nothing of Prometheus). Every call comes after
 * the store's operation committed, once, so a retried transaction is never counted twice.
 * Calls are on the hot path: an implementation must be cheap and must not throw.
 */
export interface EngineObserver {
  /** Messages a client's send stored, with their sizes in bytes (dead-letter moves are not sends). */
  sent(queue: QueueRecord, sizes: readonly number[]): void;
  /** FIFO sends answered from the deduplication cache: nothing new was stored. */
  deduplicated(queue: QueueRecord, count: number): void;
  /** A ReceiveMessage call that returned `count` messages; 0 is an empty receive. */
  received(queue: QueueRecord, count: number): void;
  /** Messages deleted by DeleteMessage or DeleteMessageBatch. */
  deleted(queue: QueueRecord, count: number): void;
  /** A message moved from `from` into the dead-letter queue with id `to`. */
  deadLettered(from: QueueRecord, to: number, reason: DeathReason): void;
  /** A message removed for `reason` with no dead-letter queue to go to. */
  dropped(from: QueueRecord, reason: DeathReason): void;
  /** A message whose dead-lettering would have closed a cycle, parked in the cycles queue instead. */
  cycleBroken(from: QueueRecord, reason: DeathReason): void;
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

import type { ActivityStore } from './activity.js';
import type { DeadLetterStore } from './dead-letters.js';
import type { EnvelopeStore } from './envelopes.js';
import type { ExchangeStore } from './exchanges.js';
import type { HeldDeliveryStore } from './held-deliveries.js';
import type { MaintenanceStore } from './maintenance.js';
import type { MessageStore } from './messages.js';
import type { MoveTaskStore } from './move-tasks.js';
import type { PolicyStore } from './policies.js';
import type { QueueStore } from './queues.js';
import type { StoreStats } from './stats.js';
import type { WakeupStore } from './wakeups.js';

export type * from './activity.js';
export type * from './dead-letters.js';
export type * from './envelopes.js';
export type * from './exchanges.js';
export type * from './held-deliveries.js';
export type * from './maintenance.js';
export type * from './messages.js';
export type * from './move-tasks.js';
export type * from './policies.js';
export type * from './queues.js';
export type * from './receipts.js';
export type * from './stats.js';
export type * from './wakeups.js';

/**
 * What the engine needs from storage (its port; the stores in src/stores are adapters).
 * Every rule of queue behaviour lives in the engine and reaches a store as plain
 * parameters (times, limits, where dead letters go), so a store only has to apply them
 * atomically. It comes in roles, one interface and one file each in every store.
 *
 * Nothing here assumes one process: a store shared by several servers (PostgreSQL)
 * implements the same operations with row locks, and carries wake-ups between them.
 *
 * A failure of the storage itself (a full disk, a database that is down) is thrown as
 * the engine's `storageUnavailable` error (errors.ts): each store maps its driver's errors.
 */
export interface Store {
  /** `sqlite`, `memory` or `postgres`. */
  readonly kind: string;
  readonly queues: QueueStore;
  readonly messages: MessageStore;
  readonly deadLetters: DeadLetterStore;
  readonly moveTasks: MoveTaskStore;
  readonly maintenance: MaintenanceStore;
  readonly wakeups: WakeupStore;
  /** AMQP exchanges, bindings and queue declarations. */
  readonly exchanges: ExchangeStore;
  /** Policies set at run time (the management API). */
  readonly policies: PolicyStore;
  readonly activity: ActivityStore;
  /** AMQP deliveries by the process holding them, to return a dead process's at once. */
  readonly heldDeliveries: HeldDeliveryStore;
  /** What a held message carries, rewritten (AMQP 1.0's `modified` and `released`). */
  readonly envelopes: EnvelopeStore;
  /** The store's own figures (group commit, connection pool), for metrics; a store may have none. */
  stats?(): StoreStats;
  close(): Promise<void>;
}

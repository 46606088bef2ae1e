import type { QueueAddress } from '../kernel/addressing.js';
import type { QueueRecord } from '../kernel/types.js';

/** An account in one region: what ListQueues lists. */
export type QueueOwner = Pick<QueueAddress, 'accountId' | 'region'>;

/** A queue as it is created: everything but the id the store assigns. */
export type NewQueue = Omit<QueueRecord, 'id'>;

/** A queue to create at `now`: created and modified then, never purged, without tags unless given. */
export function newQueue(
  fields: Pick<NewQueue, 'accountId' | 'region' | 'name' | 'fifo' | 'attributes'> & { tags?: Record<string, string> },
  now: number,
): NewQueue {
  return { ...fields, tags: fields.tags ?? {}, createdAt: now, modifiedAt: now, lastPurgeAt: null };
}

export interface QueueStore {
  /** Inserts the queue unless one of that name exists; returns whichever is stored. */
  create(queue: NewQueue): Promise<{ queue: QueueRecord; created: boolean }>;
  get(address: QueueAddress): Promise<QueueRecord | undefined>;
  /**
   * The queue, when the store holds it in memory and knows it current; else undefined
   * (then `get`). Optional: it spares the request path a promise per action.
   */
  cached?(address: QueueAddress): QueueRecord | undefined;
  byId(id: number): Promise<QueueRecord | undefined>;
  /** The account's queues in one region, in name order, starting after `after`, at most `limit`. */
  list(owner: QueueOwner, prefix: string, after: string | undefined, limit: number): Promise<QueueRecord[]>;
  /**
   * Every queue of every account, for background work and overviews; the records may be
   * shared and frozen (stores cache the list while no queue changes).
   */
  all(): Promise<readonly QueueRecord[]>;
  update(id: number, patch: QueuePatch): Promise<QueueRecord | undefined>;
  /** Deletes the queue with its messages and FIFO state. */
  delete(id: number): Promise<boolean>;
  /** Deletes every message if no purge happened within `cooldownMs`; false otherwise. */
  purge(id: number, now: number, cooldownMs: number): Promise<boolean>;
}

export interface QueuePatch {
  setAttributes?: Record<string, string>;
  removeAttributes?: string[];
  setTags?: Record<string, string>;
  removeTags?: string[];
  modifiedAt?: number;
}

/**
 * How a queue's retention is read from its attributes, given by the engine so the store
 * can find what is due across every queue in one statement.
 */
export interface RetentionRule {
  /** The attribute holding the retention in seconds (MessageRetentionPeriod). */
  attribute: string;
  /** Its value for a queue that does not have it. */
  defaultSeconds: number;
}

/** A queue whose oldest message passes its retention at `dueAt`. */
export interface RetentionDue {
  queueId: number;
  dueAt: number;
}

/**
 * Background work: retention, expiry, FIFO bookkeeping, leases and shared secrets. The
 * store says what is due, so an idle server with many queues does not visit each one.
 */
export interface MaintenanceStore {
  /**
   * The queues with a message, soonest due first: when each one's oldest message passes
   * its retention. Up to `limit`; the first not yet due tells when to look again.
   */
  retentionDue(rule: RetentionRule, limit: number): Promise<RetentionDue[]>;
  /** Ids of the queues holding a ready message whose time-to-live has passed at `now` (up to `limit`). */
  expiryDue(now: number, limit: number): Promise<number[]>;
  /** Deletes the queue's messages sent before `cutoff` (retention); returns how many. */
  deleteSentBefore(queueId: number, cutoff: number): Promise<number>;
  /** Forgets FIFO deduplication ids and receive attempts whose interval ended before `now`. */
  forgetDeduplication(now: number): Promise<number>;
  /**
   * Takes or renews the named lease for `owner` until `now + ttlMs`, if it is free,
   * lapsed or already `owner`'s. Background work shared by several servers on one store
   * runs only on the holder.
   */
  tryLease(name: string, owner: string, now: number, ttlMs: number): Promise<boolean>;
  /**
   * The secret of that name, storing `fresh` first if there is none. Every process on
   * the same database gets the same value (the receipt-handle signing key).
   */
  secret(name: string, fresh: string): Promise<string>;
  /**
   * Resolves when the store can serve requests now: it answers a query, its schema is
   * at the version this code expects, and it can commit a write. Otherwise rejects with
   * an error whose message says why (storage failures as the engine's
   * `storageUnavailable`). Used by the server's readiness check (`GET /ready`), which
   * caches the answer, so this may do a little real work.
   */
  ready(): Promise<void>;
}

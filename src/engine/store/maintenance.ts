/** Background work: retention, FIFO bookkeeping, leases and shared secrets. */
export interface MaintenanceStore {
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

/**
 * Figures of a store's own machinery, for metrics (`Store.stats`). Each store fills in
 * what it has: the SQLite group commit, the PostgreSQL connection pool.
 */
export interface StoreStats {
  /** SQLite: every group-commit transaction since the store opened. */
  groupCommit?: {
    /** Writes joined in one transaction. */
    batchSize: HistogramData;
    /** How long one transaction took to run and commit, in seconds. */
    commitSeconds: HistogramData;
  };
  /** PostgreSQL: the connection pool now. */
  pool?: { total: number; idle: number; waiting: number; max: number };
}

/** A histogram since start: `counts[i]` observations fell at or under `bounds[i]` and over the bound before; the last slot is past every bound. */
export interface HistogramData {
  bounds: readonly number[];
  counts: readonly number[];
  sum: number;
  count: number;
}

/** Accumulates a HistogramData; cheap enough for every commit (a short scan of the bounds). */
export class HistogramCounts implements HistogramData {
  readonly counts: number[];
  sum = 0;
  count = 0;

  constructor(readonly bounds: readonly number[]) {
    this.counts = new Array<number>(bounds.length + 1).fill(0);
  }

  observe(v: number): void {
    let i = 0;
    while (i < this.bounds.length && v > this.bounds[i]!) i++;
    this.counts[i]!++;
    this.sum += v;
    this.count++;
  }
}

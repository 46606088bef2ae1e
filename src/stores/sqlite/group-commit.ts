import type Database from 'better-sqlite3';
import { HistogramCounts } from '../../engine/store/stats.js';

interface Job {
  run: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  result?: unknown;
  error?: unknown;
  failed?: boolean;
}

export interface CommitHooks {
  /** After a successful commit, before the callers are answered. */
  afterCommit?(): void;
  /** After a rollback, of the transaction or of one job's savepoint: what was written in it is gone. */
  afterRollback?(): void;
}

/** A job failed on the fast path: the batch is retried with one savepoint per job. */
class JobFailed extends Error {
  override readonly name = 'JobFailed';
}

/**
 * Group commit: every write that arrives while the event loop is busy joins one
 * transaction, committed once on the next turn, and each promise settles only after the
 * commit returned, so a caller never acknowledges data that is not yet written.
 *
 * Jobs first run back to back with no savepoints (the common case: nothing fails). If
 * one throws, the whole transaction is rolled back and the batch runs again with each
 * job in its own savepoint, so a failing write is undone alone.
 */
export class GroupCommit {
  private jobs: Job[] = [];
  private scheduled = false;
  private readonly fast: Database.Transaction<(jobs: Job[]) => void>;
  private readonly safe: Database.Transaction<(jobs: Job[]) => void>;
  private readonly db: Database.Database;
  /** Writes per transaction and seconds per transaction, since start (for metrics). */
  readonly batchSizes = new HistogramCounts([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]);
  readonly commitSeconds = new HistogramCounts([
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1,
  ]);

  constructor(
    db: Database.Database,
    private readonly hooks: CommitHooks,
  ) {
    const savepoint = db.transaction((fn: () => unknown) => fn());
    this.db = db;
    this.fast = db.transaction((jobs: Job[]) => {
      for (const job of jobs) {
        try {
          job.result = job.run();
        } catch (_e) {
          throw new JobFailed();
        }
      }
    });
    this.safe = db.transaction((jobs: Job[]) => {
      for (const job of jobs) {
        try {
          job.result = savepoint(job.run);
        } catch (e) {
          // SQLITE_FULL, IOERR, NOMEM or BUSY may roll back the whole transaction, not
          // just the savepoint: then later jobs would run (and commit) on their own, so
          // the batch stops here and is rejected as a whole.
          if (!this.db.inTransaction) throw e;
          this.hooks.afterRollback?.();
          job.failed = true;
          job.error = e;
        }
      }
    });
  }

  run<T>(fn: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.jobs.push({ run: fn, resolve: resolve as (v: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Runs everything queued so far in one transaction. */
  flush(): void {
    this.scheduled = false;
    const jobs = this.jobs;
    this.jobs = [];
    if (jobs.length === 0) return;
    const start = performance.now();
    try {
      try {
        this.fast(jobs);
      } catch (e) {
        if (!(e instanceof JobFailed)) throw e;
        this.hooks.afterRollback?.();
        this.safe(jobs);
      }
    } catch (e) {
      this.hooks.afterRollback?.();
      for (const job of jobs) job.reject(e);
      return;
    }
    this.batchSizes.observe(jobs.length);
    this.commitSeconds.observe((performance.now() - start) / 1000);
    this.hooks.afterCommit?.();
    for (const job of jobs) {
      if (job.failed) job.reject(job.error);
      else job.resolve(job.result);
    }
  }
}

import type Database from 'better-sqlite3';

interface Job {
  run: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  result?: unknown;
  error?: unknown;
  failed?: boolean;
}

/**
 * Group commit: every write that arrives while the event loop is busy joins one
 * transaction, committed once on the next turn. Each write runs in its own savepoint,
 * so one failing write is rolled back alone, and its promise settles only after the
 * commit returned, so a caller never acknowledges data that is not yet written.
 */
export class GroupCommit {
  private jobs: Job[] = [];
  private scheduled = false;
  private readonly outer: Database.Transaction<(jobs: Job[]) => void>;
  private readonly savepoint: Database.Transaction<(fn: () => unknown) => unknown>;

  constructor(
    db: Database.Database,
    private readonly afterCommit: () => void,
  ) {
    this.savepoint = db.transaction((fn: () => unknown) => fn());
    this.outer = db.transaction((jobs: Job[]) => {
      for (const job of jobs) {
        try {
          job.result = this.savepoint(job.run);
        } catch (e) {
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
    try {
      this.outer(jobs);
    } catch (e) {
      for (const job of jobs) job.reject(e);
      return;
    }
    for (const job of jobs) {
      if (job.failed) job.reject(job.error);
      else job.resolve(job.result);
    }
    this.afterCommit();
  }
}

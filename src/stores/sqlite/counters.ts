import type Database from 'better-sqlite3';
import type { QueueStats } from '../../engine/store/queues.js';

type Counts = [sent: number, received: number, deleted: number];

/**
 * Each queue's sent, received and deleted totals since it was created (QueueStore.stats;
 * the activity per minute is the engine's, activity-counts.ts). A counter upsert per
 * request would cost as much as the request's own write, so counts are summed in memory,
 * first for the running job of the group commit, then for the whole commit, and written
 * once, in the same transaction, just before it commits (GroupCommit's hooks call the
 * last three).
 */
export class SqliteCounters {
  private job = new Map<number, Counts>();
  private batch = new Map<number, Counts>();
  private readonly sql;

  constructor(db: Database.Database) {
    this.sql = {
      add: db.prepare(
        `INSERT INTO queue_stats (queue_id, sent, received, deleted) VALUES (?,?,?,?)
         ON CONFLICT (queue_id) DO UPDATE SET sent = sent + excluded.sent,
           received = received + excluded.received, deleted = deleted + excluded.deleted`,
      ),
      read: db.prepare('SELECT sent, received, deleted FROM queue_stats WHERE queue_id = ?'),
      drop: db.prepare('DELETE FROM queue_stats WHERE queue_id = ?'),
    };
  }

  /** Adds to a queue's counters; call inside the job of the counted operation. */
  count(queueId: number, sent: number, received: number, deleted: number): void {
    if (!(sent || received || deleted)) return;
    add(this.job, queueId, [sent, received, deleted]);
  }

  read(queueId: number): QueueStats {
    const r = this.sql.read.get(queueId) as QueueStats | undefined;
    return r ? { sent: Number(r.sent), received: Number(r.received), deleted: Number(r.deleted) } : { sent: 0, received: 0, deleted: 0 };
  }

  /** Drops a deleted queue's counters; call inside the queue's delete transaction. */
  drop(queueId: number): void {
    this.sql.drop.run(queueId);
  }

  /** A job ended: its counts join the batch if it committed its savepoint, else vanish. */
  jobDone(ok: boolean): void {
    if (ok) for (const [id, c] of this.job) add(this.batch, id, c);
    this.job.clear();
  }

  /** Writes the batch's counts; runs inside the transaction, after the last job. */
  flush(): void {
    for (const [id, [s, r, d]] of this.batch) this.sql.add.run(id, s, r, d);
    this.batch.clear();
  }

  /** The transaction was rolled back: nothing counted in it happened. */
  discard(): void {
    this.job.clear();
    this.batch.clear();
  }
}

function add(m: Map<number, Counts>, id: number, [s, r, d]: Counts): void {
  const c = m.get(id);
  if (c) {
    c[0] += s;
    c[1] += r;
    c[2] += d;
  } else m.set(id, [s, r, d]);
}

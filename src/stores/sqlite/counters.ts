import type Database from 'better-sqlite3';
import { minuteOf } from '../../engine/store/activity.js';
import type { QueueStats } from '../../engine/store/queues.js';

type Counts = [sent: number, received: number, deleted: number];
/** A queue's counts in one minute: sent, received, deleted, dead-lettered. */
type MinuteCounts = [queueId: number, minute: number, sent: number, received: number, deleted: number, deadLettered: number];

/**
 * Each queue's sent, received and deleted counters, and its activity per minute (the
 * same counts and dead-lettered messages, by the minute of the operation's `now`, for
 * GetQueueActivity). A counter upsert per request would cost as much as the request's
 * own write, so counts are summed in memory, first for the running job of the group
 * commit, then for the whole commit, and written once, in the same transaction, just
 * before it commits (GroupCommit's hooks call the last three).
 */
export class SqliteCounters {
  private job = new Map<number, Counts>();
  private batch = new Map<number, Counts>();
  private jobMinutes = new Map<string, MinuteCounts>();
  private batchMinutes = new Map<string, MinuteCounts>();
  private readonly sql;

  constructor(db: Database.Database) {
    this.sql = {
      add: db.prepare(
        `INSERT INTO queue_stats (queue_id, sent, received, deleted) VALUES (?,?,?,?)
         ON CONFLICT (queue_id) DO UPDATE SET sent = sent + excluded.sent,
           received = received + excluded.received, deleted = deleted + excluded.deleted`,
      ),
      addMinute: db.prepare(
        `INSERT INTO queue_activity (queue_id, minute, sent, received, deleted, dead_lettered) VALUES (?,?,?,?,?,?)
         ON CONFLICT (queue_id, minute) DO UPDATE SET sent = sent + excluded.sent, received = received + excluded.received,
           deleted = deleted + excluded.deleted, dead_lettered = dead_lettered + excluded.dead_lettered`,
      ),
      read: db.prepare('SELECT sent, received, deleted FROM queue_stats WHERE queue_id = ?'),
      drop: db.prepare('DELETE FROM queue_stats WHERE queue_id = ?'),
    };
  }

  /** Adds to a queue's counters, in the minute of `now`; call inside the job of the counted operation. */
  count(queueId: number, sent: number, received: number, deleted: number, now: number): void {
    if (!(sent || received || deleted)) return;
    add(this.job, queueId, [sent, received, deleted]);
    this.addMinute(queueId, now, sent, received, deleted, 0);
  }

  /** Counts a message of the queue dead-lettered (moved, parked or dropped) at `now`. */
  deadLettered(queueId: number, now: number): void {
    this.addMinute(queueId, now, 0, 0, 0, 1);
  }

  private addMinute(queueId: number, now: number, s: number, r: number, d: number, dl: number): void {
    const minute = minuteOf(now);
    const key = `${queueId}:${minute}`;
    const c = this.jobMinutes.get(key);
    if (c) addMinute(c, [queueId, minute, s, r, d, dl]);
    else this.jobMinutes.set(key, [queueId, minute, s, r, d, dl]);
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
    if (ok) {
      for (const [id, c] of this.job) add(this.batch, id, c);
      for (const [key, c] of this.jobMinutes) {
        const b = this.batchMinutes.get(key);
        if (b) addMinute(b, c);
        else this.batchMinutes.set(key, c);
      }
    }
    this.job.clear();
    this.jobMinutes.clear();
  }

  /** Writes the batch's counts; runs inside the transaction, after the last job. */
  flush(): void {
    for (const [id, [s, r, d]] of this.batch) this.sql.add.run(id, s, r, d);
    for (const c of this.batchMinutes.values()) this.sql.addMinute.run(...c);
    this.batch.clear();
    this.batchMinutes.clear();
  }

  /** The transaction was rolled back: nothing counted in it happened. */
  discard(): void {
    this.job.clear();
    this.batch.clear();
    this.jobMinutes.clear();
    this.batchMinutes.clear();
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

function addMinute(into: MinuteCounts, c: MinuteCounts): void {
  for (let i = 2; i < 6; i++) into[i]! += c[i]!;
}

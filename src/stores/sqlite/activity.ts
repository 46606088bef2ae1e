import type Database from 'better-sqlite3';
import type { ActivityCounts, ActivityMinute, ActivityStore } from '../../engine/store/activity.js';
import type { GroupCommit } from './group-commit.js';

/** Per-minute activity: the engine's counts (added about once a second), sampled depths, pruning. */
export class SqliteActivity implements ActivityStore {
  private readonly sql;

  constructor(
    db: Database.Database,
    private readonly commit: GroupCommit,
  ) {
    this.sql = {
      add: db.prepare(
        `INSERT INTO queue_activity (queue_id, minute, sent, received, deleted, dead_lettered, dead_letter_arrivals) VALUES (?,?,?,?,?,?,?)
         ON CONFLICT (queue_id, minute) DO UPDATE SET sent = sent + excluded.sent, received = received + excluded.received,
           deleted = deleted + excluded.deleted, dead_lettered = dead_lettered + excluded.dead_lettered,
           dead_letter_arrivals = dead_letter_arrivals + excluded.dead_letter_arrivals`,
      ),
      minutes: db
        .prepare(
          `SELECT minute, sent, received, deleted, dead_lettered, dead_letter_arrivals, depth FROM queue_activity
          WHERE queue_id = ? AND minute BETWEEN ? AND ? ORDER BY minute`,
        )
        .raw(true),
      depth: db.prepare(
        `INSERT INTO queue_activity (queue_id, minute, depth) VALUES (?,?,?)
         ON CONFLICT (queue_id, minute) DO UPDATE SET depth = excluded.depth`,
      ),
      counts: db
        .prepare(
          `SELECT queue_id, minute, sent, received, deleted, dead_lettered, dead_letter_arrivals FROM queue_activity
          WHERE minute BETWEEN ? AND ? AND (sent + received + deleted + dead_lettered + dead_letter_arrivals) > 0`,
        )
        .raw(true),
      queueCounts: db
        .prepare(
          `SELECT queue_id, minute, sent, received, deleted, dead_lettered, dead_letter_arrivals FROM queue_activity
          WHERE queue_id = ? AND minute BETWEEN ? AND ? AND (sent + received + deleted + dead_lettered + dead_letter_arrivals) > 0`,
        )
        .raw(true),
      prune: db.prepare('DELETE FROM queue_activity WHERE minute < ?'),
      active: db.prepare('SELECT queue_id FROM queue_activity WHERE minute = ?').pluck(),
    };
  }

  add(counts: readonly ActivityCounts[]): Promise<void> {
    return this.commit.run(() => {
      for (const c of counts)
        this.sql.add.run(c.queueId, c.minute, c.sent, c.received, c.deleted, c.deadLettered, c.deadLetterArrivals);
    });
  }

  async minutes(queueId: number, from: number, to: number): Promise<ActivityMinute[]> {
    return (this.sql.minutes.all(queueId, from, to) as (number | null)[][]).map(
      ([minute, sent, received, deleted, deadLettered, arrivals, depth]) => ({
        minute: minute!,
        sent: sent!,
        received: received!,
        deleted: deleted!,
        deadLettered: deadLettered!,
        deadLetterArrivals: arrivals!,
        ...(depth !== null && { depth: depth! }),
      }),
    );
  }

  async counts(from: number, to: number, queueIds?: readonly number[]): Promise<ActivityCounts[]> {
    const rows = (
      queueIds === undefined
        ? this.sql.counts.all(from, to)
        : queueIds.flatMap((id) => this.sql.queueCounts.all(id, from, to))
    ) as number[][];
    return rows.map(([queueId, minute, sent, received, deleted, deadLettered, deadLetterArrivals]) => ({
      queueId: queueId!,
      minute: minute!,
      sent: sent!,
      received: received!,
      deleted: deleted!,
      deadLettered: deadLettered!,
      deadLetterArrivals: deadLetterArrivals!,
    }));
  }

  async active(minute: number): Promise<number[]> {
    return this.sql.active.all(minute) as number[];
  }

  recordDepths(minute: number, depths: readonly (readonly [number, number])[]): Promise<void> {
    return this.commit.run(() => {
      for (const [id, depth] of depths) this.sql.depth.run(id, minute, depth);
    });
  }

  prune(before: number): Promise<number> {
    return this.commit.run(() => this.sql.prune.run(before).changes);
  }
}

import type pg from 'pg';
import type { ActivityCounts, ActivityMinute, ActivityStore } from '../../engine/store/activity.js';
import { STATS_SHARD } from './sql.js';

/** The shard of queue_activity that holds sampled depths; counts go to the connection's shard (sql.ts). */
const DEPTH_SHARD = -1;

/**
 * Per-minute activity: the engine's counts, added by each node about once a second in
 * one statement, sharded by connection (STATS_SHARD), so concurrent nodes never wait on one row;
 * a read sums the shards. Every node reads the same rows.
 */
export class PostgresActivity implements ActivityStore {
  constructor(private readonly pool: pg.Pool) {}

  async add(counts: readonly ActivityCounts[]): Promise<void> {
    if (counts.length === 0) return;
    const col = (f: (c: ActivityCounts) => number) => counts.map(f);
    await this.pool.query(
      `INSERT INTO queue_activity (queue_id, minute, shard, sent, received, deleted, dead_lettered, dead_letter_arrivals)
       SELECT c.id, c.minute, ${STATS_SHARD}, sum(c.s), sum(c.r), sum(c.d), sum(c.dl), sum(c.a)
         FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[])
           AS c(id, minute, s, r, d, dl, a)
        GROUP BY c.id, c.minute ORDER BY c.id, c.minute
       ON CONFLICT (queue_id, minute, shard) DO UPDATE SET sent = queue_activity.sent + excluded.sent,
         received = queue_activity.received + excluded.received, deleted = queue_activity.deleted + excluded.deleted,
         dead_lettered = queue_activity.dead_lettered + excluded.dead_lettered,
         dead_letter_arrivals = queue_activity.dead_letter_arrivals + excluded.dead_letter_arrivals`,
      [
        col((c) => c.queueId),
        col((c) => c.minute),
        col((c) => c.sent),
        col((c) => c.received),
        col((c) => c.deleted),
        col((c) => c.deadLettered),
        col((c) => c.deadLetterArrivals),
      ],
    );
  }

  async minutes(queueId: number, from: number, to: number): Promise<ActivityMinute[]> {
    const { rows } = await this.pool.query<Record<string, string | null>>(
      `SELECT minute, sum(sent) AS sent, sum(received) AS received, sum(deleted) AS deleted,
              sum(dead_lettered) AS dead_lettered, sum(dead_letter_arrivals) AS dead_letter_arrivals, max(depth) AS depth
         FROM queue_activity WHERE queue_id = $1 AND minute BETWEEN $2 AND $3 GROUP BY minute ORDER BY minute`,
      [queueId, from, to],
    );
    return rows.map((r) => ({ ...countsOf(r), ...(r.depth !== null && { depth: Number(r.depth) }) }));
  }

  async counts(from: number, to: number, queueIds?: readonly number[]): Promise<ActivityCounts[]> {
    const { rows } = await this.pool.query<Record<string, string>>(
      `SELECT queue_id, minute, sum(sent) AS sent, sum(received) AS received, sum(deleted) AS deleted,
              sum(dead_lettered) AS dead_lettered, sum(dead_letter_arrivals) AS dead_letter_arrivals
         FROM queue_activity WHERE minute BETWEEN $1 AND $2 AND shard <> ${DEPTH_SHARD}
          ${queueIds === undefined ? '' : 'AND queue_id = ANY($3::bigint[])'}
        GROUP BY queue_id, minute HAVING sum(sent + received + deleted + dead_lettered + dead_letter_arrivals) > 0`,
      queueIds === undefined ? [from, to] : [from, to, queueIds],
    );
    return rows.map((r) => ({ queueId: Number(r.queue_id), ...countsOf(r) }));
  }

  async active(minute: number): Promise<number[]> {
    const { rows } = await this.pool.query<{ queue_id: string }>(
      `SELECT DISTINCT queue_id FROM queue_activity WHERE minute = $1 AND shard <> ${DEPTH_SHARD}`,
      [minute],
    );
    return rows.map((r) => Number(r.queue_id));
  }

  async recordDepths(minute: number, depths: readonly (readonly [number, number])[]): Promise<void> {
    if (depths.length === 0) return;
    await this.pool.query(
      `INSERT INTO queue_activity (queue_id, minute, shard, depth)
       SELECT d.id, $3, ${DEPTH_SHARD}, d.depth FROM unnest($1::bigint[], $2::bigint[]) AS d(id, depth) ORDER BY d.id
       ON CONFLICT (queue_id, minute, shard) DO UPDATE SET depth = excluded.depth`,
      [depths.map((d) => d[0]), depths.map((d) => d[1]), minute],
    );
  }

  async prune(before: number): Promise<number> {
    return (await this.pool.query('DELETE FROM queue_activity WHERE minute < $1', [before])).rowCount ?? 0;
  }
}

/** A minute's summed counts, as the queries above name their columns. */
function countsOf(r: Record<string, string | null>): Omit<ActivityCounts, 'queueId'> {
  return {
    minute: Number(r.minute),
    sent: Number(r.sent),
    received: Number(r.received),
    deleted: Number(r.deleted),
    deadLettered: Number(r.dead_lettered),
    deadLetterArrivals: Number(r.dead_letter_arrivals),
  };
}

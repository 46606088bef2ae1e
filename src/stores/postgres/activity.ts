import type pg from 'pg';
import type { ActivityMinute, ActivityStore } from '../../engine/store/activity.js';

/** The shard of queue_activity that holds sampled depths; counts go to the connection's shard (sql.ts). */
const DEPTH_SHARD = -1;

/**
 * Per-minute activity: counts are added by the counting statements themselves
 * (`countedCtes`, `minuteSql` in sql.ts), sharded as queue_stats is, so concurrent
 * nodes never wait on one row; a read sums the shards. Every node reads the same rows.
 */
export class PgActivity implements ActivityStore {
  constructor(private readonly pool: pg.Pool) {}

  async minutes(queueId: number, from: number, to: number): Promise<ActivityMinute[]> {
    const { rows } = await this.pool.query<Record<string, string | null>>(
      `SELECT minute, sum(sent) AS sent, sum(received) AS received, sum(deleted) AS deleted,
              sum(dead_lettered) AS dead_lettered, max(depth) AS depth
         FROM queue_activity WHERE queue_id = $1 AND minute BETWEEN $2 AND $3 GROUP BY minute ORDER BY minute`,
      [queueId, from, to],
    );
    return rows.map((r) => ({
      minute: Number(r.minute), sent: Number(r.sent), received: Number(r.received), deleted: Number(r.deleted),
      deadLettered: Number(r.dead_lettered), ...(r.depth !== null && { depth: Number(r.depth) }),
    }));
  }

  async active(minute: number): Promise<number[]> {
    const { rows } = await this.pool.query<{ queue_id: string }>(
      `SELECT DISTINCT queue_id FROM queue_activity WHERE minute = $1 AND shard <> ${DEPTH_SHARD}`, [minute],
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

import type pg from 'pg';
import type { QueueDepth } from '../../engine/types.js';
import { inTransaction } from './sql.js';

/**
 * Many queues' depths in one statement, in one snapshot. The hidden range, the oldest
 * message and the groups in flight are read per queue over indexes; the total is the sum
 * of the queue's maintained count shards (queue_count, migration 9), whatever the backlog
 * (docs/performance.md).
 */
export async function queueDepths(pool: pg.Pool, queueIds: readonly number[], now: number): Promise<Map<number, QueueDepth>> {
  const rows = await inTransaction(pool, async (client) => {
    // Every part is a per-queue index lookup; left to itself the planner, pricing the
    // subqueries for the average queue (or with no statistics yet after a bulk load),
    // scanned the messages table once per queue or once per call.
    await client.query('SET TRANSACTION READ ONLY; SET LOCAL enable_seqscan = off; SET LOCAL max_parallel_workers_per_gather = 0; SET LOCAL jit = off');
    const { rows } = await client.query<DepthRow>(
      `SELECT q.id, (SELECT coalesce(sum(messages), 0) FROM queue_count c WHERE c.queue_id = q.id) AS total, h.hidden, h.inflight,
              (SELECT min(sent_at) FROM messages m WHERE m.queue_id = q.id) AS oldest,
              (SELECT count(DISTINCT group_id) FROM messages m WHERE m.queue_id = q.id AND group_id IS NOT NULL
                  AND receipt_token IS NOT NULL AND visible_at > $2) AS groups
         FROM queues q
         CROSS JOIN LATERAL (SELECT count(*) AS hidden, count(*) FILTER (WHERE receive_count > 0) AS inflight
                               FROM messages m WHERE m.queue_id = q.id AND visible_at > $2) h
        WHERE q.id = ANY($1::bigint[])`,
      [queueIds, now],
    );
    return rows;
  });
  const out = new Map<number, QueueDepth>();
  for (const r of rows) {
    const hidden = Number(r.hidden);
    const inflight = Number(r.inflight);
    out.set(Number(r.id), {
      visible: Number(r.total) - hidden, inflight, delayed: hidden - inflight, groupsInflight: Number(r.groups),
      ...(r.oldest !== null && { oldestSentAt: Number(r.oldest) }),
    });
  }
  return out;
}

interface DepthRow {
  id: string;
  total: string;
  hidden: string;
  inflight: string;
  oldest: string | null;
  groups: string;
}

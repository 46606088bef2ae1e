import type pg from 'pg';
import type { QueueDepth } from '../../engine/types.js';

/**
 * Many queues' depths in two statements. The hidden range, the oldest message and the
 * groups in flight are read per queue over indexes, whatever the backlog. The totals are
 * counted in one grouped statement: a queue with a length limit has a maintained depth,
 * the others are counted (PostgreSQL keeps no depth row for them, as a row updated by
 * every send would serialise a queue's sends across nodes), so this part grows with the
 * backlog (docs/performance.md). It is a separate statement because, as a correlated
 * subquery, the planner priced the count for the average queue and scanned the table once
 * per queue.
 */
export async function queueDepths(pool: pg.Pool, queueIds: readonly number[], now: number): Promise<Map<number, QueueDepth>> {
  const [{ rows }, { rows: counted }] = await Promise.all([
    pool.query<DepthRow>(
      `SELECT q.id, d.messages AS maintained, h.hidden, h.inflight,
              (SELECT min(sent_at) FROM messages m WHERE m.queue_id = q.id) AS oldest,
              (SELECT count(DISTINCT group_id) FROM messages m WHERE m.queue_id = q.id AND group_id IS NOT NULL
                  AND receipt_token IS NOT NULL AND visible_at > $2) AS groups
         FROM queues q
         LEFT JOIN queue_depth d ON d.queue_id = q.id
         CROSS JOIN LATERAL (SELECT count(*) AS hidden, count(*) FILTER (WHERE receive_count > 0) AS inflight
                               FROM messages m WHERE m.queue_id = q.id AND visible_at > $2) h
        WHERE q.id = ANY($1::bigint[])`,
      [queueIds, now],
    ),
    pool.query<{ queue_id: string; n: string }>(
      `SELECT queue_id, count(*) AS n FROM messages
        WHERE queue_id = ANY($1::bigint[]) AND queue_id NOT IN (SELECT queue_id FROM queue_depth)
        GROUP BY queue_id`,
      [queueIds],
    ),
  ]);
  const totals = new Map(counted.map((r) => [Number(r.queue_id), Number(r.n)]));
  const out = new Map<number, QueueDepth>();
  for (const r of rows) {
    const id = Number(r.id);
    const hidden = Number(r.hidden);
    const inflight = Number(r.inflight);
    const total = r.maintained !== null ? Number(r.maintained) : (totals.get(id) ?? 0);
    out.set(id, {
      // Two statements, two snapshots: a send between them must not make the count negative.
      visible: Math.max(0, total - hidden), inflight, delayed: hidden - inflight, groupsInflight: Number(r.groups),
      ...(r.oldest !== null && { oldestSentAt: Number(r.oldest) }),
    });
  }
  return out;
}

interface DepthRow {
  id: string;
  maintained: string | null;
  hidden: string;
  inflight: string;
  oldest: string | null;
  groups: string;
}

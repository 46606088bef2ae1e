import type pg from 'pg';
import type { GroupInflight } from '../../engine/store/messages.js';
import type { MessageCounts, QueueDepth } from '../../engine/kernel/types.js';
import { inTransaction } from './sql.js';

// How many messages queues hold, by state: the counting queries of the message store
// (messages.ts delegates to them).

/**
 * Many queues' depths in one statement, in one snapshot. The hidden range, the oldest
 * message and the groups in flight are read per queue over indexes; the total is the sum
 * of the queue's maintained count shards (queue_count, kept by the triggers of
 * migrations/000009.sql), whatever the backlog (docs/performance.md).
 */
export async function queueDepths(
  pool: pg.Pool,
  queueIds: readonly number[],
  now: number,
): Promise<Map<number, QueueDepth>> {
  const rows = await inTransaction(pool, async (client) => {
    // Every part is a per-queue index lookup; left to itself the planner, pricing the
    // subqueries for the average queue (or with no statistics yet after a bulk load),
    // scanned the messages table once per queue or once per call.
    await client.query(
      'SET TRANSACTION READ ONLY; SET LOCAL enable_seqscan = off; SET LOCAL max_parallel_workers_per_gather = 0; SET LOCAL jit = off',
    );
    const { rows } = await client.query<DepthRow>(
      `SELECT q.id, (SELECT coalesce(sum(messages), 0) FROM queue_count c WHERE c.queue_id = q.id) AS total, h.hidden, h.inflight,
              (SELECT sent_at FROM messages m WHERE m.queue_id = q.id ORDER BY seq LIMIT 1) AS oldest,
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
      visible: Number(r.total) - hidden,
      inflight,
      delayed: hidden - inflight,
      groupsInflight: Number(r.groups),
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

/** In-flight messages only. */
export async function countInflight(pool: pg.Pool, queueId: number, now: number): Promise<number> {
  // The range condition on visible_at lets messages_ready skip the visible backlog.
  const { rows } = await pool.query<{ n: string }>(
    'SELECT count(*) AS n FROM messages WHERE queue_id = $1 AND visible_at > $2 AND receive_count > 0',
    [queueId, now],
  );
  return Number(rows[0]!.n);
}

/** A fair queue's messages in flight, in all and by group. */
export async function inflightByGroup(pool: pg.Pool, queueId: number, now: number): Promise<GroupInflight> {
  const { rows } = await pool.query<{ group_id: string | null; n: string }>(
    'SELECT group_id, count(*) AS n FROM messages WHERE queue_id = $1 AND visible_at > $2 AND receive_count > 0 GROUP BY group_id',
    [queueId, now],
  );
  const groups = new Map<string, number>();
  let total = 0;
  for (const r of rows) {
    total += Number(r.n);
    if (r.group_id !== null) groups.set(r.group_id, Number(r.n));
  }
  return { total, groups };
}

/** A fair queue's counts and oldest message outside its noisy groups. */
export async function quietDepth(
  pool: pg.Pool,
  queueId: number,
  noisy: readonly string[],
  now: number,
): Promise<MessageCounts & { oldestSentAt?: number }> {
  const { rows } = await pool.query<{ visible: string; inflight: string; delayed: string; oldest: string | null }>(
    `SELECT count(*) FILTER (WHERE visible_at <= $2) AS visible, count(*) FILTER (WHERE visible_at > $2 AND receive_count > 0) AS inflight,
            count(*) FILTER (WHERE visible_at > $2 AND receive_count = 0) AS delayed, min(sent_at) AS oldest
       FROM messages WHERE queue_id = $1 AND (group_id IS NULL OR group_id <> ALL($3::text[]))`,
    [queueId, now, noisy],
  );
  const r = rows[0]!;
  return {
    visible: Number(r.visible),
    inflight: Number(r.inflight),
    delayed: Number(r.delayed),
    ...(r.oldest !== null && { oldestSentAt: Number(r.oldest) }),
  };
}

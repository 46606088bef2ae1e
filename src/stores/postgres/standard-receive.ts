import { messageColumns, nullColumns } from './message-rows.js';

/** The standard receive's statements (messages.ts runs them). */
const WINDOW = `SELECT seq, group_id FROM deliveries
     WHERE queue_id = $1 AND visible_at <= $2 AND (sent_at >= $3) IS TRUE AND seq <> ALL($8::bigint[])
     ORDER BY visible_at, seq LIMIT $9`;

/**
 * Fair queues: the window, and the first ready messages of each group that is not noisy,
 * found by walking the queue's groups on deliveries_group (one seek a group) rather than
 * the ready index, where they may sit behind a noisy group's whole backlog. Ranked as
 * takeOrder ranks them: quiet 0, then the noisy groups in $10's order (noisyRanking).
 */
const FAIR_CANDIDATES = `
  g(id, n) AS (
    SELECT (SELECT group_id FROM deliveries WHERE queue_id = $1 AND group_id IS NOT NULL ORDER BY group_id LIMIT 1), 1
    UNION ALL
    SELECT (SELECT group_id FROM deliveries WHERE queue_id = $1 AND group_id IS NOT NULL AND group_id > g.id ORDER BY group_id LIMIT 1), n + 1
      FROM g WHERE g.id IS NOT NULL AND n < $11
  ),
  quiet AS (
    SELECT q.seq, q.group_id FROM g CROSS JOIN LATERAL (
      SELECT seq, group_id FROM deliveries
       WHERE queue_id = $1 AND group_id = g.id AND visible_at <= $2 AND (sent_at >= $3) IS TRUE AND seq <> ALL($8::bigint[])
       ORDER BY seq LIMIT $4) q
     WHERE g.id IS NOT NULL AND g.id <> ALL($10::text[])
     ORDER BY q.seq LIMIT $9
  ),
  candidates AS (
    SELECT w.seq, coalesce(array_position($10::text[], w.group_id), 0) AS rank
      FROM ((${WINDOW}) UNION SELECT seq, group_id FROM quiet) w
  )`;

/**
 * A standard receive in one statement: read a window of the first ready messages
 * (standard-plan.ts), lock the oldest sent of them (quiet groups' first on a fair queue),
 * skipping any a concurrent receive (on any node) holds, and claim them. Messages received
 * too often are returned unclaimed (poison = true) for the caller to dead-letter. When
 * fewer than asked were ready, one more row, with poison NULL, gives the next visible time,
 * which a long poll would otherwise ask for in a round trip of its own (ReceiveResult.nextVisibleAt).
 */
const receiveSql = (fair: boolean) => `
  WITH ${
    fair
      ? `RECURSIVE ${FAIR_CANDIDATES}`
      : `candidates AS (
    -- "IS TRUE" keeps the retention test a filter, never an index condition, so even a
    -- planner with stale statistics (a new table) reads the first entries of
    -- deliveries_ready rather than walking the queue in another order and sorting it.
    SELECT seq, 0 AS rank FROM (${WINDOW}) w
  )`
  },
  picked AS (
    SELECT d.seq, d.visible_at, d.receive_count, c.rank FROM deliveries d JOIN candidates c ON c.seq = d.seq
     WHERE d.queue_id = $1 AND d.visible_at <= $2
     ORDER BY c.rank, d.seq LIMIT $4
     FOR UPDATE OF d SKIP LOCKED
  ),
  numbered AS (
    SELECT seq, row_number() OVER (ORDER BY rank, seq) AS n FROM picked WHERE receive_count < $5
  ),
  claimed AS (
    UPDATE deliveries d SET visible_at = $6, receive_count = d.receive_count + 1,
      first_received_at = coalesce(d.first_received_at, $2), received_at = $2, receipt = ($7::bytea[])[x.n]
      FROM numbered x WHERE d.queue_id = $1 AND d.seq = x.seq
    RETURNING d.*, x.n
  )
  SELECT false AS poison, ${messageColumns('c', 'm')}, c.n, NULL::bigint AS next_visible
    FROM claimed c JOIN messages m ON m.seq = c.seq
  UNION ALL
  SELECT true, ${messageColumns('d', 'm')}, 0, NULL
    FROM picked p JOIN deliveries d ON d.queue_id = $1 AND d.seq = p.seq JOIN messages m ON m.seq = p.seq
   WHERE p.receive_count >= $5
  UNION ALL
  -- The statement's snapshot has the claimed rows as they were: their new time is $6.
  SELECT NULL, ${nullColumns()}, 0,
    least((SELECT min(visible_at) FROM deliveries WHERE queue_id = $1 AND visible_at > $2), (SELECT $6::bigint FROM claimed LIMIT 1))
   WHERE (SELECT count(*) FROM picked) < $4
  ORDER BY n`;
export const RECEIVE_SQL = receiveSql(false);
export const FAIR_RECEIVE_SQL = receiveSql(true);

import type pg from 'pg';
import type { DeadLettered } from '../../engine/store/dead-letters.js';
import { planFifoReceive } from '../../engine/store/fifo-plan.js';
import type { ReceiveRequest, ReceiveResult } from '../../engine/store/messages.js';
import type { StoredMessage } from '../../engine/kernel/types.js';
import { toMessage, type MessageRow } from '../rows.js';
import type { PostgresDeadLetters } from './dead-letters.js';
import { inTransaction, messageColumns, NO_LIMIT, query, type ReceiveRow } from './sql.js';
import type { PostgresWakeups } from './wakeups.js';

/**
 * A FIFO receive in one statement. Groups are locked with FOR UPDATE SKIP LOCKED, so
 * receivers on different nodes never take the same group at once; a group whose row
 * changed since the statement's snapshot is re-checked against its newest version before
 * it is locked, so a group another node has just taken is seen as held. Within each
 * group, messages go in order up to the first delayed, in-flight or poison one. Poison
 * messages that stop a group are returned unclaimed (poison = true).
 */
const FIFO_RECEIVE_SQL = `
  WITH groups AS (
    SELECT group_id, available_at, head_seq FROM fifo_groups
     WHERE queue_id = $1 AND available_at <= $2
     ORDER BY available_at, head_seq LIMIT $4
     FOR UPDATE SKIP LOCKED
  ),
  heads AS (
    SELECT m.seq, m.visible_at, m.sent_at, m.receive_count, g.available_at AS g_at, g.head_seq AS g_seq,
           count(*) FILTER (WHERE m.visible_at > $2 OR m.receive_count >= $5)
             OVER (PARTITION BY g.group_id ORDER BY m.seq) AS stops
      FROM groups g CROSS JOIN LATERAL (
        SELECT seq, visible_at, sent_at, receive_count FROM messages
         WHERE queue_id = $1 AND group_id = g.group_id ORDER BY seq LIMIT $4::int + 10
      ) m
  ),
  numbered AS (
    SELECT seq, row_number() OVER (ORDER BY g_at, g_seq, seq) AS n FROM heads WHERE stops = 0 AND sent_at >= $3
  ),
  claimed AS (
    UPDATE messages m SET visible_at = $6, receive_count = m.receive_count + 1,
      first_received_at = coalesce(m.first_received_at, $2), received_at = $2, receipt_token = ($7::text[])[x.n]
      FROM numbered x WHERE m.seq = x.seq AND x.n <= $4 AND m.visible_at <= $2
    RETURNING m.*, x.n
  )
  SELECT false AS poison, ${messageColumns('c')}, c.n FROM claimed c
  UNION ALL
  SELECT true, ${messageColumns('m')}, 0 FROM heads h JOIN messages m ON m.seq = h.seq
   WHERE h.stops = 1 AND h.visible_at <= $2 AND h.receive_count >= $5
  ORDER BY n`;

/** The FIFO side of the PostgreSQL store: receive by group, dead-lettering, attempt replay. */
export class PostgresFifo {
  constructor(
    private readonly pool: pg.Pool,
    private readonly deadLetters: PostgresDeadLetters,
    private readonly wakeups: PostgresWakeups,
  ) {}

  async receive(queueId: number, req: ReceiveRequest): Promise<ReceiveResult> {
    const result = await this.receiveCommitted(queueId, req);
    this.wakeups.wakeDestinations(result.deadLettered);
    return result;
  }

  private async receiveCommitted(queueId: number, req: ReceiveRequest): Promise<ReceiveResult> {
    // The common case, no attempt id to record, is one statement outside a transaction.
    if (!req.attemptId) {
      const fast = await this.claim(this.pool, queueId, req);
      if (!fast.poison) return { messages: fast.messages, deadLettered: [] };
      const rest = await inTransaction(this.pool, (c) =>
        this.receiveSlowly(c, queueId, req, req.max - fast.messages.length),
      );
      return { messages: [...fast.messages, ...rest.messages], deadLettered: rest.deadLettered };
    }
    return inTransaction(this.pool, async (c) => {
      const replayed = await this.replay(c, queueId, req);
      if (replayed) return { messages: replayed, deadLettered: [] };
      const fast = await this.claim(c, queueId, req);
      const rest = fast.poison
        ? await this.receiveSlowly(c, queueId, req, req.max - fast.messages.length)
        : { messages: [], deadLettered: [] };
      const messages = [...fast.messages, ...rest.messages];
      if (messages.length) {
        await c.query(
          `INSERT INTO receive_attempts (queue_id, attempt_id, receipts, expires_at) VALUES ($1, $2, $3, $4)
           ON CONFLICT (queue_id, attempt_id) DO UPDATE SET receipts = excluded.receipts, expires_at = excluded.expires_at`,
          [
            queueId,
            req.attemptId,
            JSON.stringify(messages.map((m) => [m.seq, m.receiptToken])),
            req.attemptUntil ?? req.now,
          ],
        );
      }
      return { messages, deadLettered: rest.deadLettered };
    });
  }

  private async claim(
    db: pg.Pool | pg.PoolClient,
    queueId: number,
    req: ReceiveRequest,
  ): Promise<{ messages: StoredMessage[]; poison: boolean }> {
    const tokens = Array.from({ length: req.max }, () => req.newToken());
    const params = [
      queueId,
      req.now,
      req.retentionCutoff,
      req.max,
      req.deadLetter?.maxReceiveCount ?? NO_LIMIT,
      req.now + req.visibilityTimeoutMs,
      tokens,
    ];
    const { rows } = await query<ReceiveRow>(db, FIFO_RECEIVE_SQL, params, 'redrive-fifo-receive');
    return { messages: rows.filter((r) => !r.poison).map(toMessage), poison: rows.some((r) => r.poison) };
  }

  /**
   * The path for groups stopped by a poison message, in the caller's transaction: lock
   * the available groups, read their heads, decide with the shared planner, then move
   * the poison messages (dead-letters.ts) and claim the rest.
   */
  private async receiveSlowly(
    c: pg.PoolClient,
    queueId: number,
    req: ReceiveRequest,
    room: number,
  ): Promise<ReceiveResult> {
    const deadLettered: DeadLettered[] = [];
    if (room <= 0) return { messages: [], deadLettered };
    const { rows: groups } = await c.query<{ group_id: string }>(
      `SELECT group_id FROM fifo_groups WHERE queue_id = $1 AND available_at <= $2
        ORDER BY available_at, head_seq LIMIT $3 FOR UPDATE SKIP LOCKED`,
      [queueId, req.now, room],
    );
    if (groups.length === 0) return { messages: [], deadLettered };
    const { rows } = await c.query<MessageRow & { ord: string }>(
      `SELECT g.ord, m.* FROM unnest($2::text[]) WITH ORDINALITY AS g(group_id, ord)
         CROSS JOIN LATERAL (SELECT * FROM messages WHERE queue_id = $1 AND group_id = g.group_id ORDER BY seq LIMIT $3::int + 10) m
        ORDER BY g.ord, m.seq`,
      [queueId, groups.map((g) => g.group_id), room],
    );
    const heads = groups.map((_, i) => rows.filter((r) => Number(r.ord) === i + 1).map(toMessage));
    const plan = planFifoReceive(heads, req, room);
    if (req.deadLetter && plan.deadLetter.length) {
      await this.deadLetters.move(c, plan.deadLetter, req.deadLetter, req.now, deadLettered);
    }
    if (plan.claim.length === 0) return { messages: [], deadLettered };
    const tokens = plan.claim.map(() => req.newToken());
    const { rows: claimed } = await c.query<MessageRow & { n: string }>(
      `WITH claimed AS (
         UPDATE messages m SET visible_at = $1, receive_count = m.receive_count + 1,
           first_received_at = coalesce(m.first_received_at, $2), received_at = $2, receipt_token = u.token
           FROM unnest($3::bigint[], $4::text[]) WITH ORDINALITY AS u(seq, token, n) WHERE m.seq = u.seq
         RETURNING m.*, u.n)
       SELECT * FROM claimed ORDER BY n`,
      [req.now + req.visibilityTimeoutMs, req.now, plan.claim.map((m) => m.seq), tokens],
    );
    return { messages: claimed.map(toMessage), deadLettered };
  }

  /**
   * A retried receive with the same attempt id gets the same messages and receipts, as
   * long as none of them was deleted or had its visibility run out or changed; the
   * retry restarts their visibility timeout.
   */
  private async replay(c: pg.PoolClient, queueId: number, req: ReceiveRequest): Promise<StoredMessage[] | undefined> {
    const { rows: saved } = await c.query<{ receipts: string }>(
      'SELECT receipts FROM receive_attempts WHERE queue_id = $1 AND attempt_id = $2 AND expires_at > $3',
      [queueId, req.attemptId, req.now],
    );
    if (!saved[0]) return undefined;
    const receipts = JSON.parse(saved[0].receipts) as [number, string][];
    const { rows } = await c.query<MessageRow>(
      'SELECT * FROM messages WHERE queue_id = $1 AND seq = ANY($2::bigint[]) ORDER BY seq FOR UPDATE',
      [queueId, receipts.map(([seq]) => seq)],
    );
    const bySeq = new Map(rows.map((r) => [Number(r.seq), toMessage(r)]));
    const out: StoredMessage[] = [];
    for (const [seq, token] of receipts) {
      const m = bySeq.get(seq);
      if (!m || m.receiptToken !== token || m.visibleAt <= req.now) return undefined;
      out.push(m);
    }
    const visibleAt = req.now + req.visibilityTimeoutMs;
    await c.query('UPDATE messages SET visible_at = $1 WHERE seq = ANY($2::bigint[])', [
      visibleAt,
      out.map((m) => m.seq),
    ]);
    for (const m of out) m.visibleAt = visibleAt;
    return out;
  }
}

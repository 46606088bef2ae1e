import type pg from 'pg';
import type { NewMessage, StoredMessage } from '../../engine/types.js';
import type { DeadLetterTarget, LengthLimit, ReceiptOutcome, ReceiptRef } from '../store.js';
import { toMessage, type MessageRow } from '../sqlite/rows.js';
import { inTransaction, insertMessages } from './sql.js';

/** Moves standard messages to their dead-letter queues in place, keeping their positions. */
const MOVE_SQL = `
  UPDATE messages m SET queue_id = u.dest, visible_at = $1, sent_at = u.sent_at, dedup_id = u.dedup_id,
    dead_letter_source = u.arn, dead_lettered_at = $1, deaths = u.deaths, expires_at = u.expires_at,
    receipt_token = NULL, received_at = NULL
    FROM unnest($2::bigint[], $3::bigint[], $4::bigint[], $5::text[], $6::text[], $7::text[], $8::bigint[])
      AS u(seq, dest, sent_at, dedup_id, arn, deaths, expires_at)
   WHERE m.seq = u.seq`;

/**
 * The PostgreSQL side of dead-lettering for every reason, as SQLite's death-ops.ts: the
 * move itself (shared by the receive paths), rejection, expiry and length limits. Each
 * runs in the caller's transaction, on rows the caller has locked.
 */
export class PgDeathOps {
  constructor(private readonly pool: pg.Pool) {}

  /**
   * Moves messages to their dead-letter destinations; returns the queues that received
   * some. A standard message keeps its position; a FIFO message is re-inserted at the
   * end, so the dead-letter queue keeps arrival order.
   */
  async deadLetter(c: pg.PoolClient, messages: StoredMessage[], target: DeadLetterTarget, now: number): Promise<number[]> {
    const moves = messages.map((m) => {
      const p = target.patch(m);
      return { m, p, dest: p.queueId ?? target.queueId, deaths: p.deaths ?? m.deaths };
    });
    const inPlace = moves.filter((x) => x.m.groupId === undefined);
    const reinserted = moves.filter((x) => x.m.groupId !== undefined);
    if (inPlace.length) {
      await c.query(MOVE_SQL, [
        now, inPlace.map((x) => x.m.seq), inPlace.map((x) => x.dest), inPlace.map((x) => x.p.sentAt),
        inPlace.map((x) => x.p.dedupId ?? x.m.dedupId ?? null), inPlace.map((x) => x.p.deadLetterSourceArn),
        inPlace.map((x) => (x.deaths?.length ? JSON.stringify(x.deaths) : null)), inPlace.map((x) => x.p.expiresAt ?? null),
      ]);
    }
    if (reinserted.length) {
      await c.query('DELETE FROM messages WHERE seq = ANY($1::bigint[])', [reinserted.map((x) => x.m.seq)]);
      await insertMessages(c, reinserted.map(({ m, p, dest, deaths }) => ({
        queueId: dest, deadLetteredAt: now,
        message: {
          ...m, sentAt: p.sentAt, visibleAt: now, dedupId: p.dedupId ?? m.dedupId, deadLetterSourceArn: p.deadLetterSourceArn,
          deaths, expiresAt: p.expiresAt,
        },
      })));
    }
    return [...new Set(moves.map((x) => x.dest))];
  }

  /** Dead-letters the messages, or deletes them when there is nowhere to send them. */
  private async removeOrDeadLetter(c: pg.PoolClient, messages: StoredMessage[], target: DeadLetterTarget | undefined, now: number): Promise<number[]> {
    if (messages.length === 0) return [];
    if (target) return this.deadLetter(c, messages, target, now);
    await c.query('DELETE FROM messages WHERE seq = ANY($1::bigint[])', [messages.map((m) => m.seq)]);
    return [];
  }

  async reject(queueId: number, receipt: ReceiptRef, now: number, target: DeadLetterTarget): Promise<{ outcome: ReceiptOutcome; touched: number[] }> {
    return inTransaction(this.pool, async (c) => {
      const { rows } = await c.query<MessageRow>('SELECT * FROM messages WHERE seq = $1 AND queue_id = $2 FOR UPDATE', [receipt.seq, queueId]);
      if (!rows[0]) return { outcome: 'gone' as const, touched: [] };
      const m = toMessage(rows[0]);
      if (m.receiptToken !== receipt.token) return { outcome: 'stale' as const, touched: [] };
      if (m.visibleAt <= now) return { outcome: 'expired' as const, touched: [] };
      return { outcome: 'ok' as const, touched: await this.deadLetter(c, [m], target, now) };
    });
  }

  /** One batch of expiry. Rows another node is handling right now are skipped, not waited for. */
  async expire(queueId: number, now: number, limit: number, target: DeadLetterTarget | undefined): Promise<{ n: number; touched: number[] }> {
    return inTransaction(this.pool, async (c) => {
      const { rows } = await c.query<MessageRow>(
        `SELECT * FROM messages WHERE queue_id = $1 AND expires_at <= $2 AND visible_at <= $2
          ORDER BY expires_at, seq LIMIT $3 FOR UPDATE SKIP LOCKED`,
        [queueId, now, limit],
      );
      const due = rows.map(toMessage);
      return { n: due.length, touched: await this.removeOrDeadLetter(c, due, target, now) };
    });
  }

  /**
   * Takes the queue's depth row lock (creating the row on the queue's first limited
   * send) for the rest of the transaction, so limited sends to one queue run one at a
   * time across nodes.
   */
  async lockDepth(c: pg.PoolClient, queueId: number): Promise<void> {
    await c.query(
      `INSERT INTO queue_depth (queue_id, messages, bytes)
       SELECT $1, count(*), coalesce(sum(octet_length(body)), 0) FROM messages WHERE queue_id = $1
       ON CONFLICT (queue_id) DO NOTHING`,
      [queueId],
    );
    await c.query('SELECT 1 FROM queue_depth WHERE queue_id = $1 FOR UPDATE', [queueId]);
  }

  /**
   * Makes room for `m` within `limit` (the depth row is locked): true when it may be
   * stored. Drop-head pushes out the oldest ready messages (the next a receive would
   * get) until it fits. Adds the queues that received dead letters to `touched`.
   */
  async admit(c: pg.PoolClient, queueId: number, m: NewMessage, limit: LengthLimit, touched: Set<number>): Promise<boolean> {
    const size = Buffer.byteLength(m.body, 'utf8');
    for (;;) {
      const { rows: [d] } = await c.query<{ messages: string; bytes: string }>('SELECT messages, bytes FROM queue_depth WHERE queue_id = $1', [queueId]);
      const fits = (limit.maxMessages === undefined || Number(d!.messages) + 1 <= limit.maxMessages)
        && (limit.maxBytes === undefined || Number(d!.bytes) + size <= limit.maxBytes);
      if (fits) return true;
      if (limit.overflow === 'reject-publish') return false;
      const { rows: [head] } = await c.query<MessageRow>(
        'SELECT * FROM messages WHERE queue_id = $1 AND visible_at <= $2 ORDER BY visible_at, seq LIMIT 1 FOR UPDATE SKIP LOCKED',
        [queueId, m.sentAt],
      );
      if (!head) return false;
      for (const id of await this.removeOrDeadLetter(c, [toMessage(head)], limit.deadLetter, m.sentAt)) touched.add(id);
    }
  }
}

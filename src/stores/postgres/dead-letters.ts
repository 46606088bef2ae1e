import type pg from 'pg';
import {
  copiedMessage,
  copyOutcomes,
  type BreakdownRow,
  type DeadLettered,
  type DeadLetterCopies,
  type DeadLetterStore,
  type DeadLetterTarget,
  type LengthLimit,
  type RejectResult,
} from '../../engine/store/dead-letters.js';
import type { ReceiptRef } from '../../engine/store/messages.js';
import type { DeathReason, NewMessage, StoredMessage } from '../../engine/kernel/types.js';
import { toMessage, type MessageRow } from '../rows.js';
import { createQueue } from './queues.js';
import { inTransaction, insertMessages } from './sql.js';
import type { PostgresWakeups } from './wakeups.js';

/** Moves standard messages to their dead-letter queues in place, keeping their positions. */
const MOVE_SQL = `
  UPDATE messages m SET queue_id = u.dest, visible_at = $1, sent_at = u.sent_at, dedup_id = u.dedup_id,
    dead_letter_source = u.arn, dead_lettered_at = $1, deaths = u.deaths, expires_at = u.expires_at,
    receive_count = coalesce(u.receive_count, m.receive_count), receipt_token = NULL, received_at = NULL
    FROM unnest($2::bigint[], $3::bigint[], $4::bigint[], $5::text[], $6::text[], $7::text[], $8::bigint[], $9::int[])
      AS u(seq, dest, sent_at, dedup_id, arn, deaths, expires_at, receive_count)
   WHERE m.seq = u.seq`;

/**
 * Dead-lettering for every reason, as in the SQLite store: the move itself (shared by
 * the receive paths and drop-head), rejection, expiry and length limits. The moves run
 * in the caller's transaction, on rows the caller has locked, and append what they did
 * to the caller's `out` list; the caller wakes the destinations after the commit, and
 * the engine logs and counts what the operation returns.
 */
export class PostgresDeadLetters implements DeadLetterStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly wakeups: PostgresWakeups,
  ) {}

  async reject(queueId: number, receipt: ReceiptRef, now: number, target: DeadLetterTarget): Promise<RejectResult> {
    const result = await inTransaction(this.pool, async (c): Promise<RejectResult> => {
      const deadLettered: DeadLettered[] = [];
      const { rows } = await c.query<MessageRow>('SELECT * FROM messages WHERE seq = $1 AND queue_id = $2 FOR UPDATE', [
        receipt.seq,
        queueId,
      ]);
      if (!rows[0]) return { outcome: 'gone', deadLettered };
      const m = toMessage(rows[0]);
      if (m.receiptToken !== receipt.token) return { outcome: 'stale', deadLettered };
      if (m.visibleAt <= now) return { outcome: 'lapsed', deadLettered };
      await this.move(c, [m], target, now, deadLettered);
      return { outcome: 'ok', deadLettered };
    });
    this.wakeups.wakeDestinations(result.deadLettered);
    return result;
  }

  /** One batch of expiry. Rows another node is handling right now are skipped, not waited for. */
  async expire(
    queueId: number,
    now: number,
    limit: number,
    target: DeadLetterTarget | undefined,
  ): Promise<DeadLettered[]> {
    const out = await inTransaction(this.pool, async (c) => {
      const { rows } = await c.query<MessageRow>(
        `SELECT * FROM messages WHERE queue_id = $1 AND expires_at <= $2 AND visible_at <= $2
          ORDER BY expires_at, seq LIMIT $3 FOR UPDATE SKIP LOCKED`,
        [queueId, now, limit],
      );
      const deadLettered: DeadLettered[] = [];
      await this.moveOrDrop(c, rows.map(toMessage), target, 'expired', now, deadLettered);
      return deadLettered;
    });
    this.wakeups.wakeDestinations(out);
    return out;
  }

  /**
   * Moves messages to their dead-letter destinations. A standard message keeps its
   * position; a FIFO message is re-inserted at the end, so the dead-letter queue keeps
   * arrival order.
   */
  async move(
    c: pg.PoolClient,
    messages: StoredMessage[],
    target: DeadLetterTarget,
    now: number,
    out: DeadLettered[],
  ): Promise<void> {
    let cycles: number | undefined;
    const moves = [];
    const copied: { m: StoredMessage; p: DeadLetterCopies }[] = [];
    for (const m of messages) {
      const p = target.arrival(m);
      if (p.kind === 'copies') {
        copied.push({ m, p });
        continue;
      }
      if (p.kind === 'cycle') cycles ??= (await createQueue(c, target.cyclesQueue!)).queue.id;
      moves.push({ m, p, dest: p.kind === 'cycle' ? cycles! : target.queueId, deaths: p.deaths ?? m.deaths });
    }
    const inPlace = moves.filter((x) => x.m.groupId === undefined);
    const reinserted = moves.filter((x) => x.m.groupId !== undefined);
    if (inPlace.length) {
      await c.query(MOVE_SQL, [
        now,
        inPlace.map((x) => x.m.seq),
        inPlace.map((x) => x.dest),
        inPlace.map((x) => x.p.sentAt),
        inPlace.map((x) => x.p.dedupId ?? x.m.dedupId ?? null),
        inPlace.map((x) => x.p.deadLetterSourceArn),
        inPlace.map((x) => (x.deaths?.length ? JSON.stringify(x.deaths) : null)),
        inPlace.map((x) => x.p.expiresAt ?? null),
        inPlace.map((x) => x.p.receiveCount ?? null),
      ]);
    }
    if (reinserted.length) {
      await c.query('DELETE FROM messages WHERE seq = ANY($1::bigint[])', [reinserted.map((x) => x.m.seq)]);
      await insertMessages(
        c,
        reinserted.map(({ m, p, dest, deaths }) => ({
          queueId: dest,
          deadLetteredAt: now,
          message: {
            ...m,
            sentAt: p.sentAt,
            visibleAt: now,
            dedupId: p.dedupId ?? m.dedupId,
            deadLetterSourceArn: p.deadLetterSourceArn,
            deaths,
            expiresAt: p.expiresAt,
            receiveCount: p.receiveCount ?? m.receiveCount,
          },
        })),
      );
    }
    for (const x of moves) {
      out.push({
        kind: x.p.kind === 'cycle' ? 'cycle' : 'moved',
        messageId: x.m.messageId,
        from: x.m.queueId,
        to: x.dest,
        reason: target.reason,
      });
    }
    if (copied.length) {
      // AMQP dead-letter exchanges: each message is replaced by a copy in every queue it routes to.
      await c.query('DELETE FROM messages WHERE seq = ANY($1::bigint[])', [copied.map((x) => x.m.seq)]);
      const copies = copied.flatMap(({ m, p }) =>
        p.copies.map((k) => ({
          m,
          row: { queueId: k.queueId, deadLetteredAt: now, message: copiedMessage(m, p, k, now) },
        })),
      );
      const seqs = await insertMessages(
        c,
        copies.map((x) => x.row),
      );
      // A copy keeps the first receive time, as a message moved to an SQS DLQ does.
      await c.query(
        `UPDATE messages SET first_received_at = x.at
         FROM unnest($1::bigint[], $2::bigint[]) AS x(seq, at) WHERE messages.seq = x.seq`,
        [seqs, copies.map((x) => x.m.firstReceivedAt)],
      );
      for (const { m, p } of copied) out.push(...copyOutcomes(m, p, target.reason));
    }
  }

  /** One covering pass over the partial index of dead-lettered messages (migrations/000006.sql). */
  async breakdown(queueId: number): Promise<BreakdownRow[]> {
    const { rows } = await this.pool.query<{
      source: string;
      reason: string | null;
      n: string;
      oldest: string | null;
      newest: string | null;
    }>(
      `SELECT dead_letter_source AS source, death_reason AS reason, count(*) AS n,
              min(dead_lettered_at) AS oldest, max(dead_lettered_at) AS newest
         FROM messages WHERE queue_id = $1 AND dead_letter_source IS NOT NULL
        GROUP BY dead_letter_source, death_reason`,
      [queueId],
    );
    return rows.map((r) => ({
      sourceArn: r.source,
      reason: r.reason,
      count: Number(r.n),
      oldest: Number(r.oldest ?? 0),
      newest: Number(r.newest ?? 0),
    }));
  }

  /** Dead-letters the messages, or drops them when there is nowhere to send them. */
  private async moveOrDrop(
    c: pg.PoolClient,
    messages: StoredMessage[],
    target: DeadLetterTarget | undefined,
    reason: DeathReason,
    now: number,
    out: DeadLettered[],
  ): Promise<void> {
    if (messages.length === 0) return;
    if (target) return this.move(c, messages, target, now, out);
    await c.query('DELETE FROM messages WHERE seq = ANY($1::bigint[])', [messages.map((m) => m.seq)]);
    for (const m of messages) out.push({ kind: 'dropped', messageId: m.messageId, from: m.queueId, reason });
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
   * get) until it fits.
   */
  async admit(
    c: pg.PoolClient,
    queueId: number,
    m: NewMessage,
    limit: LengthLimit,
    out: DeadLettered[],
  ): Promise<boolean> {
    const size = Buffer.byteLength(m.body, 'utf8');
    for (;;) {
      const {
        rows: [d],
      } = await c.query<{ messages: string; bytes: string }>(
        'SELECT messages, bytes FROM queue_depth WHERE queue_id = $1',
        [queueId],
      );
      const fits =
        (limit.maxMessages === undefined || Number(d!.messages) + 1 <= limit.maxMessages) &&
        (limit.maxBytes === undefined || Number(d!.bytes) + size <= limit.maxBytes);
      if (fits) return true;
      if (limit.overflow === 'reject-publish') return false;
      const {
        rows: [head],
      } = await c.query<MessageRow>(
        'SELECT * FROM messages WHERE queue_id = $1 AND visible_at <= $2 ORDER BY visible_at, seq LIMIT 1 FOR UPDATE SKIP LOCKED',
        [queueId, m.sentAt],
      );
      if (!head) return false;
      await this.moveOrDrop(c, [toMessage(head)], limit.deadLetter, 'maxlen', m.sentAt, out);
    }
  }
}

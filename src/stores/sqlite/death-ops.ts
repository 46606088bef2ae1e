import type Database from 'better-sqlite3';
import type { NewMessage, StoredMessage } from '../../engine/types.js';
import type { DeadLetterTarget, LengthLimit, ReceiptOutcome, ReceiptRef } from '../store.js';
import { BOUND_LIMIT, MESSAGE_COLUMNS, messageValues, toMessage, type MessageRow } from './rows.js';

/**
 * The SQLite side of dead-lettering for every reason: the move itself (shared by the
 * receive paths), rejection, expiry and length limits. Each runs inside the caller's
 * transaction.
 */
export class SqliteDeathOps {
  private readonly q: ReturnType<SqliteDeathOps['prepare']>;

  constructor(
    private readonly db: Database.Database,
    private readonly touch: (queueId: number) => void,
    private readonly messageAt: (seq: number, queueId: number) => StoredMessage | undefined,
  ) {
    this.q = this.prepare();
  }

  private prepare() {
    const db = this.db;
    return {
      move: db.prepare(
        `UPDATE messages SET queue_id = ?, visible_at = ?, sent_at = ?, dedup_id = ?, dead_letter_source = ?,
           dead_lettered_at = ?, deaths = ?, expires_at = ?, receipt_token = NULL, received_at = NULL WHERE seq = ?`,
      ),
      insert: db.prepare(
        `INSERT INTO messages (${MESSAGE_COLUMNS.join(',')}, dead_lettered_at) VALUES (${MESSAGE_COLUMNS.map(() => '?').join(',')}, ?)`,
      ),
      remove: db.prepare('DELETE FROM messages WHERE seq = ?'),
      due: db.prepare(
        `SELECT * FROM messages WHERE queue_id = ? AND expires_at <= ? AND visible_at <= ? ORDER BY expires_at, seq ${BOUND_LIMIT}`,
      ),
      head: db.prepare('SELECT * FROM messages WHERE queue_id = ? AND visible_at <= ? ORDER BY visible_at, seq LIMIT 1'),
      depth: db.prepare('SELECT messages, bytes FROM queue_depth WHERE queue_id = ?'),
      initDepth: db.prepare(
        `INSERT INTO queue_depth (queue_id, messages, bytes)
         SELECT ?, count(*), coalesce(sum(length(CAST(body AS BLOB))), 0) FROM messages WHERE queue_id = ?`,
      ),
      dropDepth: db.prepare('DELETE FROM queue_depth WHERE queue_id = ?'),
    };
  }

  /**
   * Moves one message to its dead-letter destination. A standard message keeps its
   * position; a FIFO message is re-inserted at the end, so the DLQ keeps arrival order.
   */
  deadLetter(m: StoredMessage, target: DeadLetterTarget, now: number): void {
    const p = target.patch(m);
    const dest = p.queueId ?? target.queueId;
    const deaths = p.deaths ?? m.deaths;
    if (m.groupId === undefined) {
      this.q.move.run(
        dest, now, p.sentAt, p.dedupId ?? m.dedupId ?? null, p.deadLetterSourceArn, now,
        deaths?.length ? JSON.stringify(deaths) : null, p.expiresAt ?? null, m.seq,
      );
    } else {
      this.q.remove.run(m.seq);
      const moved: NewMessage = {
        ...m, sentAt: p.sentAt, visibleAt: now, dedupId: p.dedupId ?? m.dedupId, deadLetterSourceArn: p.deadLetterSourceArn,
        deaths, expiresAt: p.expiresAt,
      };
      this.q.insert.run(...messageValues(dest, moved), now);
    }
    this.touch(dest);
  }

  /** Dead-letters `m`, or deletes it when there is nowhere to send it. */
  private removeOrDeadLetter(m: StoredMessage, target: DeadLetterTarget | undefined, now: number): void {
    if (target) this.deadLetter(m, target, now);
    else this.q.remove.run(m.seq);
  }

  reject(queueId: number, receipt: ReceiptRef, now: number, target: DeadLetterTarget): ReceiptOutcome {
    const m = this.messageAt(receipt.seq, queueId);
    if (!m) return 'gone';
    if (m.receiptToken !== receipt.token) return 'stale';
    if (m.visibleAt <= now) return 'expired';
    this.deadLetter(m, target, now);
    return 'ok';
  }

  expire(queueId: number, now: number, limit: number, target: DeadLetterTarget | undefined): number {
    const rows = (this.q.due.all(queueId, now, now, limit) as MessageRow[]).map(toMessage);
    for (const m of rows) this.removeOrDeadLetter(m, target, now);
    return rows.length;
  }

  /**
   * Makes room for `m` within `limit`: true when it may be stored. Drop-head pushes out
   * the oldest ready messages (the next a receive would get) until it fits.
   */
  admit(queueId: number, m: NewMessage, limit: LengthLimit): boolean {
    const size = Buffer.byteLength(m.body, 'utf8');
    for (;;) {
      const d = this.depthOf(queueId);
      const fits = (limit.maxMessages === undefined || d.messages + 1 <= limit.maxMessages)
        && (limit.maxBytes === undefined || d.bytes + size <= limit.maxBytes);
      if (fits) return true;
      if (limit.overflow === 'reject-publish') return false;
      const head = this.q.head.get(queueId, m.sentAt) as MessageRow | undefined;
      if (!head) return false;
      this.removeOrDeadLetter(toMessage(head), limit.deadLetter, m.sentAt);
    }
  }

  /** The queue's depth; the first call for a queue counts it once, triggers keep it after. */
  private depthOf(queueId: number): { messages: number; bytes: number } {
    let d = this.q.depth.get(queueId) as { messages: number; bytes: number } | undefined;
    if (!d) {
      this.q.initDepth.run(queueId, queueId);
      d = this.q.depth.get(queueId) as { messages: number; bytes: number };
    }
    return d;
  }

  dropQueue(queueId: number): void {
    this.q.dropDepth.run(queueId);
  }
}

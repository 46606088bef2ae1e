import type Database from 'better-sqlite3';
import {
  copiedMessage,
  copyOutcomes,
  type BreakdownRow,
  type DeadLettered,
  type DeadLetterStore,
  type DeadLetterTarget,
  type LengthLimit,
  type RejectResult,
} from '../../engine/store/dead-letters.js';
import type { ReceiptRef } from '../../engine/store/messages.js';
import type { NewQueue } from '../../engine/store/queues.js';
import type { DeathReason, NewMessage, StoredMessage } from '../../engine/types.js';
import { messageValues, toMessage, type MessageRow } from '../rows.js';
import type { GroupCommit } from './group-commit.js';
import { BOUND_LIMIT, insertMessageSql } from './sql.js';
import type { SqliteWakeups } from './wakeups.js';

/**
 * Dead-lettering for every reason: the move itself (shared by the receive paths and
 * drop-head), rejection, expiry and length limits. The moves run inside the caller's
 * transaction and append what they did to the caller's `out` list, which the operation
 * returns: the engine logs and counts after the commit.
 */
export class SqliteDeadLetters implements DeadLetterStore {
  private readonly sql;

  constructor(
    db: Database.Database,
    private readonly commit: GroupCommit,
    private readonly wakeups: SqliteWakeups,
    private readonly readMessage: (seq: number, queueId: number) => StoredMessage | undefined,
    /** Creates a queue unless it exists, in the running transaction; returns its id. */
    private readonly ensureQueue: (queue: NewQueue) => number,
  ) {
    this.sql = {
      move: db.prepare(
        `UPDATE messages SET queue_id = ?, visible_at = ?, sent_at = ?, dedup_id = ?, dead_letter_source = ?,
           dead_lettered_at = ?, deaths = ?, expires_at = ?, receive_count = coalesce(?, receive_count),
           receipt_token = NULL, received_at = NULL WHERE seq = ?`,
      ),
      insert: db.prepare(insertMessageSql(['dead_lettered_at'])),
      insertCopy: db.prepare(insertMessageSql(['dead_lettered_at', 'first_received_at'])),
      remove: db.prepare('DELETE FROM messages WHERE seq = ?'),
      due: db.prepare(
        `SELECT * FROM messages WHERE queue_id = ? AND expires_at <= ? AND visible_at <= ? ORDER BY expires_at, seq ${BOUND_LIMIT}`,
      ),
      head: db.prepare(
        'SELECT * FROM messages WHERE queue_id = ? AND visible_at <= ? ORDER BY visible_at, seq LIMIT 1',
      ),
      depth: db.prepare('SELECT messages, bytes FROM queue_depth WHERE queue_id = ?'),
      // One covering pass over the partial index of dead-lettered messages (migrations/000009.sql).
      breakdown: db
        .prepare(
          `SELECT dead_letter_source AS source, death_reason AS reason, count(*) AS n,
                min(dead_lettered_at) AS oldest, max(dead_lettered_at) AS newest
           FROM messages WHERE queue_id = ? AND dead_letter_source IS NOT NULL
          GROUP BY dead_letter_source, death_reason`,
        )
        .raw(true),
      initDepth: db.prepare(
        `INSERT INTO queue_depth (queue_id, messages, bytes)
         SELECT ?, count(*), coalesce(sum(length(CAST(body AS BLOB))), 0) FROM messages WHERE queue_id = ?`,
      ),
    };
  }

  reject(queueId: number, receipt: ReceiptRef, now: number, target: DeadLetterTarget): Promise<RejectResult> {
    return this.commit.run(() => {
      const m = this.readMessage(receipt.seq, queueId);
      const deadLettered: DeadLettered[] = [];
      if (!m) return { outcome: 'gone', deadLettered };
      if (m.receiptToken !== receipt.token) return { outcome: 'stale', deadLettered };
      if (m.visibleAt <= now) return { outcome: 'lapsed', deadLettered };
      this.move(m, target, now, deadLettered);
      return { outcome: 'ok', deadLettered };
    });
  }

  expire(queueId: number, now: number, limit: number, target: DeadLetterTarget | undefined): Promise<DeadLettered[]> {
    return this.commit.run(() => {
      const out: DeadLettered[] = [];
      for (const row of this.sql.due.all(queueId, now, now, limit) as MessageRow[]) {
        this.moveOrDrop(toMessage(row), target, 'expired', now, out);
      }
      return out;
    });
  }

  async breakdown(queueId: number): Promise<BreakdownRow[]> {
    return (this.sql.breakdown.all(queueId) as [string, string | null, number, number | null, number | null][]).map(
      ([sourceArn, reason, count, oldest, newest]) => ({
        sourceArn,
        reason,
        count,
        oldest: oldest ?? 0,
        newest: newest ?? 0,
      }),
    );
  }

  /**
   * Moves one message to its dead-letter destination. A standard message keeps its
   * position; a FIFO message is re-inserted at the end, so the DLQ keeps arrival order.
   */
  move(m: StoredMessage, target: DeadLetterTarget, now: number, out: DeadLettered[]): void {
    const a = target.arrival(m);
    if (a.kind === 'copies') {
      // An AMQP dead-letter exchange: the message is replaced by a copy in each queue it routes to.
      this.sql.remove.run(m.seq);
      for (const c of a.copies) {
        // A copy keeps the first receive time, as a message moved to an SQS DLQ does.
        this.sql.insertCopy.run(...messageValues(c.queueId, copiedMessage(m, a, c, now)), now, m.firstReceivedAt);
        this.wakeups.wakeAfterCommit(c.queueId);
      }
      out.push(...copyOutcomes(m, a, target.reason));
      return;
    }
    const dest = a.kind === 'cycle' ? this.ensureQueue(target.cyclesQueue!) : target.queueId;
    const deaths = a.deaths ?? m.deaths;
    if (m.groupId === undefined) {
      this.sql.move.run(
        dest,
        now,
        a.sentAt,
        a.dedupId ?? m.dedupId ?? null,
        a.deadLetterSourceArn,
        now,
        deaths?.length ? JSON.stringify(deaths) : null,
        a.expiresAt ?? null,
        a.receiveCount ?? null,
        m.seq,
      );
    } else {
      this.sql.remove.run(m.seq);
      const moved: NewMessage = {
        ...m,
        sentAt: a.sentAt,
        visibleAt: now,
        dedupId: a.dedupId ?? m.dedupId,
        deadLetterSourceArn: a.deadLetterSourceArn,
        deaths,
        expiresAt: a.expiresAt,
        receiveCount: a.receiveCount ?? m.receiveCount,
      };
      this.sql.insert.run(...messageValues(dest, moved), now);
    }
    this.wakeups.wakeAfterCommit(dest);
    out.push({
      kind: a.kind === 'cycle' ? 'cycle' : 'moved',
      messageId: m.messageId,
      from: m.queueId,
      to: dest,
      reason: target.reason,
    });
  }

  /** Dead-letters `m`, or drops it when there is nowhere to send it. */
  private moveOrDrop(
    m: StoredMessage,
    target: DeadLetterTarget | undefined,
    reason: DeathReason,
    now: number,
    out: DeadLettered[],
  ): void {
    if (target) return this.move(m, target, now, out);
    this.sql.remove.run(m.seq);
    out.push({ kind: 'dropped', messageId: m.messageId, from: m.queueId, reason });
  }

  /**
   * Makes room for `m` within `limit`: true when it may be stored. Drop-head pushes out
   * the oldest ready messages (the next a receive would get) until it fits.
   */
  admit(queueId: number, m: NewMessage, limit: LengthLimit, out: DeadLettered[]): boolean {
    const size = Buffer.byteLength(m.body, 'utf8');
    for (;;) {
      const d = this.depthOf(queueId);
      const fits =
        (limit.maxMessages === undefined || d.messages + 1 <= limit.maxMessages) &&
        (limit.maxBytes === undefined || d.bytes + size <= limit.maxBytes);
      if (fits) return true;
      if (limit.overflow === 'reject-publish') return false;
      const head = this.sql.head.get(queueId, m.sentAt) as MessageRow | undefined;
      if (!head) return false;
      this.moveOrDrop(toMessage(head), limit.deadLetter, 'maxlen', m.sentAt, out);
    }
  }

  /** The queue's depth; the first call for a queue counts it once, triggers keep it after. */
  private depthOf(queueId: number): { messages: number; bytes: number } {
    let d = this.sql.depth.get(queueId) as { messages: number; bytes: number } | undefined;
    if (!d) {
      this.sql.initDepth.run(queueId, queueId);
      d = this.sql.depth.get(queueId) as { messages: number; bytes: number };
    }
    return d;
  }
}

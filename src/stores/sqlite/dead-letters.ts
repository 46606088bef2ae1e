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
import type { DeathReason, NewMessage, StoredMessage } from '../../engine/kernel/types.js';
import type { Cell } from '../rows.js';
import type { GroupCommit } from './group-commit.js';
import { MESSAGE_SELECT, sqliteMessage, type MessageRows } from './message-rows.js';
import { BOUND_LIMIT } from './sql.js';
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
    private readonly rows: MessageRows,
    /** Creates a queue unless it exists, in the running transaction; returns its id. */
    private readonly ensureQueue: (queue: NewQueue) => number,
  ) {
    this.sql = {
      // A standard message keeps its position: both rows move to the other queue.
      moveSent: db.prepare(
        `UPDATE messages SET queue_id = ?, dedup_id = ?, dead_letter_source = ?, dead_lettered_at = ?, deaths = ?,
           expires_at = ? WHERE seq = ?`,
      ),
      moveDelivery: db.prepare(
        `UPDATE deliveries SET queue_id = ?, visible_at = ?, sent_at = ?, receive_count = coalesce(?, receive_count),
           receipt = NULL, received_at = NULL WHERE queue_id = ? AND seq = ?`,
      ),
      due: db
        .prepare(
          `${MESSAGE_SELECT} WHERE m.queue_id = ? AND m.expires_at <= ? AND d.visible_at <= ?
            ORDER BY m.expires_at, m.seq ${BOUND_LIMIT}`,
        )
        .raw(true),
      head: db
        .prepare(`${MESSAGE_SELECT} WHERE d.queue_id = ? AND d.visible_at <= ? ORDER BY d.visible_at, d.seq LIMIT 1`)
        .raw(true),
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
         SELECT ?, count(*), coalesce(sum(length(CAST(m.body AS BLOB))), 0)
           FROM deliveries d JOIN messages m ON m.seq = d.seq WHERE d.queue_id = ?`,
      ),
    };
  }

  reject(queueId: number, receipt: ReceiptRef, now: number, target: DeadLetterTarget): Promise<RejectResult> {
    return this.commit.run(() => {
      const m = this.rows.read(receipt.seq, queueId);
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
      for (const row of this.sql.due.all(queueId, now, now, limit) as Cell[][]) {
        this.moveOrDrop(sqliteMessage(row), target, 'expired', now, out);
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
      this.rows.remove(m.queueId, m.seq);
      for (const c of a.copies) {
        this.rows.insert(c.queueId, copiedMessage(m, a, c, now), now, m.firstReceivedAt);
        this.wakeups.wakeAfterCommit(c.queueId);
      }
      out.push(...copyOutcomes(m, a, target.reason));
      return;
    }
    const dest = a.kind === 'cycle' ? this.ensureQueue(target.cyclesQueue!) : target.queueId;
    const deaths = a.deaths ?? m.deaths;
    if (m.groupId === undefined) {
      this.sql.moveSent.run(
        dest,
        a.dedupId ?? m.dedupId ?? null,
        a.deadLetterSourceArn,
        now,
        deaths?.length ? JSON.stringify(deaths) : null,
        a.expiresAt ?? null,
        m.seq,
      );
      this.sql.moveDelivery.run(dest, now, a.sentAt, a.receiveCount ?? null, m.queueId, m.seq);
    } else {
      this.rows.remove(m.queueId, m.seq);
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
      this.rows.insert(dest, moved, now);
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
    this.rows.remove(m.queueId, m.seq);
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
      const head = this.sql.head.get(queueId, m.sentAt) as Cell[] | undefined;
      if (!head) return false;
      this.moveOrDrop(sqliteMessage(head), limit.deadLetter, 'maxlen', m.sentAt, out);
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

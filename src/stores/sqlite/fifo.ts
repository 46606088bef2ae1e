import type Database from 'better-sqlite3';
import { planFifoReceive, type GroupHead } from '../../engine/store/fifo-plan.js';
import type { DeadLettered } from '../../engine/store/dead-letters.js';
import type { ReceiveRequest, ReceiveResult } from '../../engine/store/messages.js';
import type { NewMessage, StoredMessage } from '../../engine/kernel/types.js';
import type { SqliteDeadLetters } from './dead-letters.js';
import type { MessageRows } from './message-rows.js';
import { BOUND_LIMIT } from './sql.js';

/**
 * The SQLite side of FIFO queues: receiving by message group, deduplication, and
 * receive-attempt replay. Group availability itself is kept by triggers (migrations/000008.sql),
 * so these functions only read it. Each runs inside the caller's transaction.
 */
export class SqliteFifo {
  private readonly sql: ReturnType<SqliteFifo['prepare']>;

  constructor(
    private readonly db: Database.Database,
    private readonly deadLetters: SqliteDeadLetters,
    /** The store's one claim step, shared with standard receives. */
    private readonly claim: (queueId: number, seqs: number[], req: ReceiveRequest) => StoredMessage[],
    private readonly rows: MessageRows,
  ) {
    this.sql = this.prepare();
  }

  private prepare() {
    const db = this.db;
    return {
      readyGroups: db
        .prepare(
          `SELECT group_id FROM fifo_groups WHERE queue_id = ? AND available_at <= ? ORDER BY available_at, head_seq ${BOUND_LIMIT}`,
        )
        .pluck(),
      // What the planner decides on; the claim reads the chosen rows whole.
      groupHead: db
        .prepare(
          `SELECT seq, visible_at, receive_count, sent_at FROM deliveries WHERE queue_id = ? AND group_id = ? ORDER BY seq ${BOUND_LIMIT}`,
        )
        .raw(true),
      // The own scope first, then the other (see NewMessage.dedupOtherScope).
      seen: db.prepare(
        `SELECT message_id, seq FROM fifo_dedup WHERE queue_id = ? AND scope IN (?, ?) AND dedup_id = ? AND expires_at > ?
          ORDER BY scope = ? DESC LIMIT 1`,
      ),
      remember: db.prepare(
        'INSERT OR REPLACE INTO fifo_dedup (queue_id, scope, dedup_id, message_id, seq, expires_at) VALUES (?,?,?,?,?,?)',
      ),
      attempt: db.prepare(
        'SELECT receipts FROM receive_attempts WHERE queue_id = ? AND attempt_id = ? AND expires_at > ?',
      ),
      saveAttempt: db.prepare(
        'INSERT OR REPLACE INTO receive_attempts (queue_id, attempt_id, receipts, expires_at) VALUES (?,?,?,?)',
      ),
      rehide: db.prepare('UPDATE deliveries SET visible_at = ? WHERE queue_id = ? AND seq = ?'),
    };
  }

  /** The message already sent with this deduplication id within the interval, if any. */
  duplicateOf(queueId: number, m: NewMessage, now: number): { messageId: string; seq: number } | undefined {
    if (m.dedupId === undefined || m.dedupScope === undefined) return undefined;
    const r = this.sql.seen.get(
      queueId,
      m.dedupScope,
      m.dedupOtherScope ?? m.dedupScope,
      m.dedupId,
      now,
      m.dedupScope,
    ) as { message_id: string; seq: number } | undefined;
    return r && { messageId: r.message_id, seq: Number(r.seq) };
  }

  remember(queueId: number, m: NewMessage, seq: number): void {
    if (m.dedupId === undefined || m.dedupScope === undefined || m.dedupUntil === undefined) return;
    this.sql.remember.run(queueId, m.dedupScope, m.dedupId, m.messageId, seq, m.dedupUntil);
  }

  /**
   * Receives from available groups as the shared planner decides (fifo-plan.ts). A
   * poison message is dead-lettered (re-inserted at the end of the dead-letter queue
   * with a new position) and its group flows on.
   */
  receive(queueId: number, req: ReceiveRequest): ReceiveResult {
    const replay = req.attemptId ? this.replay(queueId, req) : undefined;
    const deadLettered: DeadLettered[] = [];
    if (replay) return { messages: replay, deadLettered };
    const plan = planFifoReceive(this.heads(queueId, req), req, req.max);
    for (const m of plan.deadLetter)
      this.deadLetters.move(this.rows.read(m.seq, queueId)!, req.deadLetter!, req.now, deadLettered);
    const messages = this.claim(
      queueId,
      plan.claim.map((m) => m.seq),
      req,
    );
    if (req.attemptId && messages.length) {
      this.sql.saveAttempt.run(
        queueId,
        req.attemptId,
        JSON.stringify(messages.map((m) => [m.seq, m.receiptToken])),
        req.attemptUntil ?? req.now,
      );
    }
    return { messages, deadLettered };
  }

  /** Whether any group of the queue has a message to hand out at `now`. */
  anyAvailable(queueId: number, now: number): boolean {
    return this.sql.readyGroups.get(queueId, now, 1) !== undefined;
  }

  /** The available groups' first messages, read only as far as the planner goes. */
  private *heads(queueId: number, req: ReceiveRequest): Generator<GroupHead[]> {
    for (const group of this.sql.readyGroups.all(queueId, req.now, req.max) as string[]) {
      const rows = this.sql.groupHead.all(queueId, group, req.max + 10) as number[][];
      yield rows.map(([seq, visibleAt, receiveCount, sentAt]) => ({
        seq: seq!,
        visibleAt: visibleAt!,
        receiveCount: receiveCount!,
        sentAt: sentAt!,
      }));
    }
  }

  /**
   * A retried receive with the same attempt id gets the same messages and receipts, as
   * long as none of them was deleted or had its visibility run out or changed; the
   * retry restarts their visibility timeout.
   */
  private replay(queueId: number, req: ReceiveRequest): StoredMessage[] | undefined {
    const saved = this.sql.attempt.get(queueId, req.attemptId, req.now) as { receipts: string } | undefined;
    if (!saved) return undefined;
    const receipts = JSON.parse(saved.receipts) as [number, string][];
    const out: StoredMessage[] = [];
    for (const [seq, token] of receipts) {
      const m = this.rows.read(seq, queueId);
      if (!m || m.receiptToken !== token || m.visibleAt <= req.now) return undefined;
      out.push(m);
    }
    const visibleAt = req.now + req.visibilityTimeoutMs;
    for (const m of out) {
      this.sql.rehide.run(visibleAt, queueId, m.seq);
      m.visibleAt = visibleAt;
    }
    return out;
  }
}

import type Database from 'better-sqlite3';
import type { StoredMessage } from '../../engine/types.js';
import type { MoveBatch, MoveBatchResult, MoveTaskRecord, MoveTaskStatus, NewMoveTask, QueueStats } from '../store.js';
import { planMoveBatch } from '../move-plan.js';
import type { GroupCommit } from './group-commit.js';
import { BOUND_LIMIT, MESSAGE_COLUMNS, messageValues, toMessage, toQueue, toTask, type MessageRow, type MoveTaskRow, type QueueRow } from './rows.js';

/**
 * The SQLite side of dead-letter work: queue counters, peeking, and move tasks. Every
 * write runs through the store's group commit, so each is one atomic step.
 */
export class SqliteDeadLetterOps {
  private readonly q: ReturnType<SqliteDeadLetterOps['prepare']>;

  constructor(
    private readonly db: Database.Database,
    private readonly commit: GroupCommit,
    /** Marks a queue whose messages may have become available (long-poll wake-up). */
    private readonly touch: (queueId: number) => void,
  ) {
    this.q = this.prepare();
  }

  private prepare() {
    const db = this.db;
    return {
      addStats: db.prepare(
        `INSERT INTO queue_stats (queue_id, sent, received, deleted) VALUES (?,?,?,?)
         ON CONFLICT (queue_id) DO UPDATE SET sent = sent + excluded.sent,
           received = received + excluded.received, deleted = deleted + excluded.deleted`,
      ),
      stats: db.prepare('SELECT sent, received, deleted FROM queue_stats WHERE queue_id = ?'),
      dropStats: db.prepare('DELETE FROM queue_stats WHERE queue_id = ?'),
      peek: db.prepare(`SELECT * FROM messages WHERE queue_id = ? AND seq > ? ORDER BY seq ${BOUND_LIMIT}`),
      depth: db.prepare('SELECT count(*) AS n, coalesce(max(seq), 0) AS maxSeq FROM messages WHERE queue_id = ?'),
      activeForSource: db.prepare(`SELECT count(*) AS n FROM move_tasks WHERE source_queue_id = ? AND status IN ('RUNNING','CANCELLING')`),
      activeForAccount: db.prepare(`SELECT count(*) AS n FROM move_tasks WHERE account_id = ? AND status IN ('RUNNING','CANCELLING')`),
      nextOrder: db.prepare('SELECT coalesce(max(created_order), 0) + 1 AS n FROM move_tasks'),
      insertTask: db.prepare(
        `INSERT INTO move_tasks (id, account_id, source_queue_id, source_arn, destination_arn, max_per_second, filter,
           status, to_move, started_at, max_seq, created_order) VALUES (?,?,?,?,?,?,?,'RUNNING',?,?,?,?)`,
      ),
      task: db.prepare('SELECT * FROM move_tasks WHERE id = ?'),
      tasksOf: db.prepare(`SELECT * FROM move_tasks WHERE source_queue_id = ? ORDER BY created_order DESC ${BOUND_LIMIT}`),
      cancel: db.prepare(`UPDATE move_tasks SET status = 'CANCELLED', lease_owner = NULL WHERE id = ? AND status = 'RUNNING'`),
      leasable: db.prepare(
        `SELECT * FROM move_tasks WHERE status = 'RUNNING' AND (lease_owner IS NULL OR lease_owner = ? OR lease_until <= ?)`,
      ),
      lease: db.prepare('UPDATE move_tasks SET lease_owner = ?, lease_until = ? WHERE id = ?'),
      release: db.prepare('UPDATE move_tasks SET lease_owner = NULL, lease_until = 0 WHERE lease_owner = ?'),
      progress: db.prepare(
        'UPDATE move_tasks SET moved = moved + ?, cursor = ?, status = ?, failure_reason = ?, lease_until = ? WHERE id = ?',
      ),
      scan: db.prepare(`SELECT * FROM messages WHERE queue_id = ? AND seq > ? AND seq <= ? ORDER BY seq ${BOUND_LIMIT}`),
      queueByName: db.prepare('SELECT * FROM queues WHERE account_id = ? AND name = ?'),
      queueExists: db.prepare('SELECT 1 AS x FROM queues WHERE id = ?'),
      insertMessage: db.prepare(
        `INSERT INTO messages (${MESSAGE_COLUMNS.join(',')}) VALUES (${MESSAGE_COLUMNS.map(() => '?').join(',')})`,
      ),
      deleteMessage: db.prepare('DELETE FROM messages WHERE seq = ?'),
    };
  }

  /**
   * Counts of the running job, then of the whole group commit: a counter upsert per
   * request would cost as much as the request's own write, so they are summed in memory
   * and written once, in the same transaction, just before it commits.
   */
  private jobCounts = new Map<number, [number, number, number]>();
  private batchCounts = new Map<number, [number, number, number]>();

  /** Adds to a queue's counters; call inside the job of the counted operation. */
  count(queueId: number, sent: number, received: number, deleted: number): void {
    if (sent || received || deleted) add(this.jobCounts, queueId, sent, received, deleted);
  }

  /** A job ended: its counts join the batch if it committed its savepoint, else vanish. */
  jobDone(ok: boolean): void {
    if (ok) for (const [id, [s, r, d]] of this.jobCounts) add(this.batchCounts, id, s, r, d);
    this.jobCounts.clear();
  }

  /** Writes the batch's counts; runs inside the transaction, after the last job. */
  flushCounts(): void {
    for (const [id, [s, r, d]] of this.batchCounts) this.q.addStats.run(id, s, r, d);
    this.batchCounts.clear();
  }

  /** The transaction was rolled back: nothing counted in it happened. */
  discardCounts(): void {
    this.jobCounts.clear();
    this.batchCounts.clear();
  }

  /** Drops a deleted queue's counters; call inside the queue's delete transaction. */
  forgetQueue(queueId: number): void {
    this.q.dropStats.run(queueId);
  }

  async queueStats(queueId: number): Promise<QueueStats> {
    const r = this.q.stats.get(queueId) as QueueStats | undefined;
    return r ? { sent: Number(r.sent), received: Number(r.received), deleted: Number(r.deleted) } : { sent: 0, received: 0, deleted: 0 };
  }

  async peekMessages(queueId: number, afterSeq: number, limit: number): Promise<StoredMessage[]> {
    return (this.q.peek.all(queueId, afterSeq, limit) as MessageRow[]).map(toMessage);
  }

  async createMoveTask(t: NewMoveTask, maxActivePerAccount: number): Promise<MoveTaskRecord | 'sourceBusy' | 'accountLimit'> {
    return this.commit.run(() => {
      if ((this.q.activeForSource.get(t.sourceQueueId) as { n: number }).n > 0) return 'sourceBusy' as const;
      if ((this.q.activeForAccount.get(t.accountId) as { n: number }).n >= maxActivePerAccount) return 'accountLimit' as const;
      const depth = this.q.depth.get(t.sourceQueueId) as { n: number; maxSeq: number };
      const order = (this.q.nextOrder.get() as { n: number }).n;
      this.q.insertTask.run(
        t.id, t.accountId, t.sourceQueueId, t.sourceArn, t.destinationArn ?? null, t.maxPerSecond ?? null,
        t.filter ?? null, t.toMove ?? depth.n, t.startedAt, depth.maxSeq, order,
      );
      return toTask(this.q.task.get(t.id) as MoveTaskRow);
    });
  }

  async getMoveTask(id: string): Promise<MoveTaskRecord | undefined> {
    const r = this.q.task.get(id) as MoveTaskRow | undefined;
    return r && toTask(r);
  }

  async listMoveTasks(sourceQueueId: number, limit: number): Promise<MoveTaskRecord[]> {
    return (this.q.tasksOf.all(sourceQueueId, limit) as MoveTaskRow[]).map(toTask);
  }

  async cancelMoveTask(id: string): Promise<MoveTaskRecord | undefined> {
    return this.commit.run(() => {
      this.q.cancel.run(id);
      const r = this.q.task.get(id) as MoveTaskRow | undefined;
      return r && toTask(r);
    });
  }

  async leaseMoveTasks(owner: string, now: number, leaseUntil: number): Promise<MoveTaskRecord[]> {
    return this.commit.run(() =>
      (this.q.leasable.all(owner, now) as MoveTaskRow[]).map((r) => {
        this.q.lease.run(owner, leaseUntil, r.id);
        return toTask(r);
      }),
    );
  }

  async releaseMoveTasks(owner: string): Promise<void> {
    await this.commit.run(() => this.q.release.run(owner));
  }

  async runMoveBatch(taskId: string, b: MoveBatch): Promise<MoveBatchResult> {
    return this.commit.run(() => {
      const row = this.q.task.get(taskId) as MoveTaskRow;
      if (row.status !== 'RUNNING' || row.lease_owner !== b.owner) return { task: toTask(row), lost: true, moved: 0 };
      const sourceId = Number(row.source_queue_id);
      const finish = (moved: number, cursor: number, status: MoveTaskStatus, reason: string | null) => {
        this.q.progress.run(moved, cursor, status, reason, b.leaseUntil, taskId);
        return { task: toTask(this.q.task.get(taskId) as MoveTaskRow), lost: false, moved };
      };
      if (!this.q.queueExists.get(sourceId)) return finish(0, Number(row.cursor), 'FAILED', b.missingQueueReason);
      const rows = (this.q.scan.all(sourceId, row.cursor, row.max_seq, b.scanLimit) as MessageRow[]).map(toMessage);
      const plan = planMoveBatch(rows, Number(row.cursor), b, (m) => {
        const a = b.destination(m);
        const q = a && (this.q.queueByName.get(a.accountId, a.name) as QueueRow | undefined);
        return q && toQueue(q);
      });
      const sentTo = new Map<number, number>();
      for (const { message, destination } of plan.moves) {
        this.q.insertMessage.run(...messageValues(destination.id, b.rewrite(message, destination)));
        this.q.deleteMessage.run(message.seq);
        sentTo.set(destination.id, (sentTo.get(destination.id) ?? 0) + 1);
      }
      // Counted as the receive, delete and send SQS's own redrive makes.
      this.count(sourceId, 0, plan.moves.length, plan.moves.length);
      for (const [id, n] of sentTo) {
        this.count(id, n, 0, 0);
        this.touch(id);
      }
      return finish(plan.moves.length, plan.cursor, plan.status, plan.failureReason);
    });
  }
}

function add(m: Map<number, [number, number, number]>, id: number, s: number, r: number, d: number): void {
  const c = m.get(id);
  if (c) {
    c[0] += s;
    c[1] += r;
    c[2] += d;
  } else m.set(id, [s, r, d]);
}

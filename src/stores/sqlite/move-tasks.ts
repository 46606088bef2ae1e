import type Database from 'better-sqlite3';
import {
  destinationsOf,
  planMoveBatch,
  planMoveById,
  withFailure,
  type MoveScope,
} from '../../engine/store/move-plan.js';
import type {
  MoveBatch,
  MoveBatchResult,
  MoveById,
  MoveByIdResult,
  MoveTaskRecord,
  MoveTaskStatus,
  MoveTaskStore,
  NewMoveTask,
} from '../../engine/store/move-tasks.js';
import type { StoredMessage } from '../../engine/kernel/types.js';
import { toQueue, toTask, type Cell, type MoveTaskRow, type QueueRow } from '../rows.js';
import type { GroupCommit } from './group-commit.js';
import { MESSAGE_SELECT, sqliteMessage, type MessageRows } from './message-rows.js';
import { BOUND_LIMIT } from './sql.js';
import type { SqliteWakeups } from './wakeups.js';

/** Redrive move tasks. Every write runs through the group commit, so each step is atomic. */
export class SqliteMoveTasks implements MoveTaskStore {
  private readonly sql: ReturnType<SqliteMoveTasks['prepare']>;

  constructor(
    private readonly db: Database.Database,
    private readonly commit: GroupCommit,
    private readonly wakeups: SqliteWakeups,
    private readonly rows: MessageRows,
  ) {
    this.sql = this.prepare();
  }

  private prepare() {
    const db = this.db;
    return {
      depth: db.prepare('SELECT count(*) AS n, coalesce(max(seq), 0) AS maxSeq FROM deliveries WHERE queue_id = ?'),
      activeForSource: db.prepare(
        `SELECT count(*) AS n FROM move_tasks WHERE source_queue_id = ? AND status IN ('RUNNING','CANCELLING')`,
      ),
      activeForAccount: db.prepare(
        `SELECT count(*) AS n FROM move_tasks WHERE account_id = ? AND status IN ('RUNNING','CANCELLING')`,
      ),
      nextOrder: db.prepare('SELECT coalesce(max(created_order), 0) + 1 AS n FROM move_tasks'),
      insertTask: db.prepare(
        `INSERT INTO move_tasks (id, account_id, source_queue_id, source_arn, destination_arn, max_per_second, filter,
           status, to_move, started_at, max_seq, created_order) VALUES (?,?,?,?,?,?,?,'RUNNING',?,?,?,?)`,
      ),
      task: db.prepare('SELECT * FROM move_tasks WHERE id = ?'),
      tasksOf: db.prepare(
        `SELECT * FROM move_tasks WHERE source_queue_id = ? ORDER BY created_order DESC ${BOUND_LIMIT}`,
      ),
      cancel: db.prepare(
        `UPDATE move_tasks SET status = 'CANCELLED', lease_owner = NULL WHERE id = ? AND status = 'RUNNING'`,
      ),
      leasable: db.prepare(
        `SELECT * FROM move_tasks WHERE status = 'RUNNING' AND (lease_owner IS NULL OR lease_owner = ? OR lease_until <= ?)`,
      ),
      lease: db.prepare('UPDATE move_tasks SET lease_owner = ?, lease_until = ? WHERE id = ?'),
      release: db.prepare('UPDATE move_tasks SET lease_owner = NULL, lease_until = 0 WHERE lease_owner = ?'),
      progress: db.prepare(
        'UPDATE move_tasks SET moved = moved + ?, cursor = ?, status = ?, failure_reason = ?, lease_until = ? WHERE id = ?',
      ),
      scan: db
        .prepare(`${MESSAGE_SELECT} WHERE d.queue_id = ? AND d.seq > ? AND d.seq <= ? ORDER BY d.seq ${BOUND_LIMIT}`)
        .raw(true),
      // A move task writes only within its scope (move-plan.ts): the owner's account and region, the source's type.
      queueInScope: db.prepare('SELECT * FROM queues WHERE account_id = ? AND region = ? AND name = ? AND fifo = ?'),
      source: db.prepare('SELECT account_id, region, fifo FROM queues WHERE id = ?'),
      // By id: dead-lettered messages through their partial index, any other by the queue's rows.
      deadById: db
        .prepare(`${MESSAGE_SELECT} WHERE m.queue_id = ? AND m.message_id = ? AND m.dead_letter_source IS NOT NULL`)
        .raw(true),
      anyById: db.prepare(`${MESSAGE_SELECT} WHERE d.queue_id = ? AND m.message_id = ?`).raw(true),
      inflightById: db
        .prepare(
          `${MESSAGE_SELECT} WHERE d.queue_id = ? AND d.visible_at > ? AND m.message_id = ? AND d.receive_count > 0`,
        )
        .raw(true),
    };
  }

  create(t: NewMoveTask, maxActivePerAccount: number): Promise<MoveTaskRecord | 'sourceBusy' | 'accountLimit'> {
    return this.commit.run(() => {
      if ((this.sql.activeForSource.get(t.sourceQueueId) as { n: number }).n > 0) return 'sourceBusy' as const;
      if ((this.sql.activeForAccount.get(t.accountId) as { n: number }).n >= maxActivePerAccount)
        return 'accountLimit' as const;
      const depth = this.sql.depth.get(t.sourceQueueId) as { n: number; maxSeq: number };
      const order = (this.sql.nextOrder.get() as { n: number }).n;
      this.sql.insertTask.run(
        t.id,
        t.accountId,
        t.sourceQueueId,
        t.sourceArn,
        t.destinationArn ?? null,
        t.maxPerSecond ?? null,
        t.filter ?? null,
        t.toMove ?? depth.n,
        t.startedAt,
        depth.maxSeq,
        order,
      );
      return toTask(this.sql.task.get(t.id) as MoveTaskRow);
    });
  }

  async get(id: string): Promise<MoveTaskRecord | undefined> {
    const r = this.sql.task.get(id) as MoveTaskRow | undefined;
    return r && toTask(r);
  }

  async list(sourceQueueId: number, limit: number): Promise<MoveTaskRecord[]> {
    return (this.sql.tasksOf.all(sourceQueueId, limit) as MoveTaskRow[]).map(toTask);
  }

  cancel(id: string): Promise<MoveTaskRecord | undefined> {
    return this.commit.run(() => {
      this.sql.cancel.run(id);
      const r = this.sql.task.get(id) as MoveTaskRow | undefined;
      return r && toTask(r);
    });
  }

  lease(owner: string, now: number, leaseUntil: number): Promise<MoveTaskRecord[]> {
    return this.commit.run(() =>
      (this.sql.leasable.all(owner, now) as MoveTaskRow[]).map((r) => {
        this.sql.lease.run(owner, leaseUntil, r.id);
        return toTask(r);
      }),
    );
  }

  async release(owner: string): Promise<void> {
    await this.commit.run(() => this.sql.release.run(owner));
  }

  runBatch(taskId: string, b: MoveBatch): Promise<MoveBatchResult> {
    return this.commit.run(() => {
      const row = this.sql.task.get(taskId) as MoveTaskRow;
      if (row.status !== 'RUNNING' || row.lease_owner !== b.owner) return { task: toTask(row), lost: true, moved: 0 };
      const sourceId = Number(row.source_queue_id);
      const finish = (moved: number, cursor: number, status: MoveTaskStatus, reason: string | null) => {
        this.sql.progress.run(moved, cursor, status, reason, b.leaseUntil, taskId);
        return { task: toTask(this.sql.task.get(taskId) as MoveTaskRow), lost: false, moved };
      };
      const source = this.sql.source.get(sourceId) as Pick<QueueRow, 'region' | 'fifo'> | undefined;
      if (!source) return finish(0, Number(row.cursor), 'FAILED', b.missingQueueReason);
      const scope: MoveScope = { accountId: row.account_id, region: source.region, fifo: Boolean(source.fifo) };
      const rows = (this.sql.scan.all(sourceId, row.cursor, row.max_seq, b.scanLimit) as Cell[][]).map(sqliteMessage);
      const plan = planMoveBatch(rows, Number(row.cursor), b, scope, (a) => {
        const q = this.sql.queueInScope.get(scope.accountId, scope.region, a.name, scope.fifo ? 1 : 0) as
          | QueueRow
          | undefined;
        return q && toQueue(q);
      });
      for (const { message, destination } of plan.moves) {
        this.rows.insert(destination.id, b.rewrite(message, destination));
        this.rows.remove(sourceId, message.seq);
      }
      // The engine counts the redrive's sends (and its receive and delete on the source).
      const sentTo = destinationsOf(plan.moves);
      for (const { queue } of sentTo) this.wakeups.wakeAfterCommit(queue.id);
      const done = finish(plan.moves.length, plan.cursor, plan.status, plan.failureReason);
      return withFailure({ ...done, sentTo }, plan);
    });
  }

  moveByIds(queueId: number, messageIds: readonly string[], move: MoveById): Promise<MoveByIdResult[]> {
    return this.commit.run(() => {
      const source = this.sql.source.get(queueId) as Pick<QueueRow, 'account_id' | 'region' | 'fifo'> | undefined;
      if (!source) return messageIds.map((id) => ({ id, outcome: 'notFound' as const }));
      // The same scope as a move task's: the source's account, region and type.
      const scope: MoveScope = { accountId: source.account_id, region: source.region, fifo: Boolean(source.fifo) };
      return messageIds.map((id) => {
        const row = (this.sql.deadById.get(queueId, id) ?? this.sql.anyById.get(queueId, id)) as Cell[] | undefined;
        const r = planMoveById(id, row && sqliteMessage(row), move, scope, (a) => {
          const q = this.sql.queueInScope.get(scope.accountId, scope.region, a.name, scope.fifo ? 1 : 0) as
            | QueueRow
            | undefined;
          return q && toQueue(q);
        });
        if (r.outcome !== 'moved') return r;
        const arriving = move.rewrite(r.message!, r.destination!);
        this.rows.insert(r.destination!.id, arriving);
        this.rows.remove(queueId, r.message!.seq);
        // The engine counts it as a move task's message (a receive, a delete and a send).
        this.wakeups.wakeAfterCommit(r.destination!.id);
        return { ...r, newMessageId: arriving.messageId };
      });
    });
  }

  async inflightById(queueId: number, messageId: string, now: number): Promise<StoredMessage | undefined> {
    const row = this.sql.inflightById.get(queueId, now, messageId) as Cell[] | undefined;
    return row && sqliteMessage(row);
  }
}

import type pg from 'pg';
import {
  destinationsOf,
  planMoveBatch,
  planMoveById,
  withFailure,
  scopedAddress,
  type MoveScope,
} from '../../engine/store/move-plan.js';
import type {
  MoveBatch,
  MoveBatchResult,
  MoveById,
  MoveByIdResult,
  MoveTaskRecord,
  MoveTaskStore,
  NewMoveTask,
} from '../../engine/store/move-tasks.js';
import type { QueueAddress } from '../../engine/kernel/addressing.js';
import type { QueueRecord, StoredMessage } from '../../engine/kernel/types.js';
import { toMessage, toQueue, toTask, type MessageRow, type MoveTaskRow, type QueueRow } from '../rows.js';
import { inTransaction, insertMessages, query } from './sql.js';
import type { PostgresWakeups } from './wakeups.js';

const ACTIVE = `status IN ('RUNNING', 'CANCELLING')`;

/**
 * Redrive move tasks. A task is a row; the node holding its lease drives it, and each batch is one
 * transaction that moves messages and records progress together, so a node that dies
 * mid-task leaves the task exactly where its last batch left it.
 */
export class PostgresMoveTasks implements MoveTaskStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly wakeups: PostgresWakeups,
  ) {}

  async create(t: NewMoveTask, maxActivePerAccount: number): Promise<MoveTaskRecord | 'sourceBusy' | 'accountLimit'> {
    return inTransaction(this.pool, async (c) => {
      // Serialises task creation per account across nodes, so the limit holds; one active
      // task per source is also a unique index.
      await c.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`move-tasks:${t.accountId}`]);
      const { rows: busy } = await c.query(`SELECT 1 FROM move_tasks WHERE source_queue_id = $1 AND ${ACTIVE}`, [
        t.sourceQueueId,
      ]);
      if (busy.length) return 'sourceBusy' as const;
      const { rows: active } = await c.query<{ n: string }>(
        `SELECT count(*) AS n FROM move_tasks WHERE account_id = $1 AND ${ACTIVE}`,
        [t.accountId],
      );
      if (Number(active[0]!.n) >= maxActivePerAccount) return 'accountLimit' as const;
      const { rows } = await c.query<MoveTaskRow>(
        `INSERT INTO move_tasks (id, account_id, source_queue_id, source_arn, destination_arn, max_per_second, filter,
           status, to_move, started_at, max_seq)
         SELECT $1, $2, $3, $4, $5, $6, $7, 'RUNNING', coalesce($9, count(*)), $8, coalesce(max(seq), 0) FROM messages WHERE queue_id = $3
         ON CONFLICT DO NOTHING RETURNING *`,
        [
          t.id,
          t.accountId,
          t.sourceQueueId,
          t.sourceArn,
          t.destinationArn ?? null,
          t.maxPerSecond ?? null,
          t.filter ?? null,
          t.startedAt,
          t.toMove ?? null,
        ],
      );
      return rows[0] ? toTask(rows[0]) : ('sourceBusy' as const);
    });
  }

  async get(id: string): Promise<MoveTaskRecord | undefined> {
    const { rows } = await this.pool.query<MoveTaskRow>('SELECT * FROM move_tasks WHERE id = $1', [id]);
    return rows[0] && toTask(rows[0]);
  }

  async list(sourceQueueId: number, limit: number): Promise<MoveTaskRecord[]> {
    const { rows } = await this.pool.query<MoveTaskRow>(
      'SELECT * FROM move_tasks WHERE source_queue_id = $1 ORDER BY created_order DESC LIMIT $2',
      [sourceQueueId, limit],
    );
    return rows.map(toTask);
  }

  async cancel(id: string): Promise<MoveTaskRecord | undefined> {
    await query(
      this.pool,
      `UPDATE move_tasks SET status = 'CANCELLED', lease_owner = NULL WHERE id = $1 AND status = 'RUNNING'`,
      [id],
    );
    return this.get(id);
  }

  async lease(owner: string, now: number, leaseUntil: number): Promise<MoveTaskRecord[]> {
    // One statement: two nodes asking at once cannot both get a task.
    const { rows } = await query<MoveTaskRow>(
      this.pool,
      `UPDATE move_tasks SET lease_owner = $1, lease_until = $3
        WHERE status = 'RUNNING' AND (lease_owner IS NULL OR lease_owner = $1 OR lease_until <= $2)
       RETURNING *`,
      [owner, now, leaseUntil],
    );
    return rows.map(toTask);
  }

  async release(owner: string): Promise<void> {
    await query(this.pool, 'UPDATE move_tasks SET lease_owner = NULL, lease_until = 0 WHERE lease_owner = $1', [owner]);
  }

  async runBatch(taskId: string, b: MoveBatch): Promise<MoveBatchResult> {
    const touched: number[] = [];
    const result = await inTransaction(this.pool, async (c) => {
      touched.length = 0;
      const {
        rows: [row],
      } = await c.query<MoveTaskRow>('SELECT * FROM move_tasks WHERE id = $1 FOR UPDATE', [taskId]);
      if (row?.status !== 'RUNNING' || row.lease_owner !== b.owner) {
        return { task: row ? toTask(row) : undefined!, lost: true, moved: 0 };
      }
      const finish = async (
        moved: number,
        cursor: number,
        status: string,
        reason: string | null,
      ): Promise<MoveBatchResult> => {
        const {
          rows: [after],
        } = await c.query<MoveTaskRow>(
          `UPDATE move_tasks SET moved = moved + $1, cursor = $2, status = $3, failure_reason = $4, lease_until = $5
            WHERE id = $6 RETURNING *`,
          [moved, cursor, status, reason, b.leaseUntil, taskId],
        );
        return { task: toTask(after!), lost: false, moved };
      };
      const sourceId = Number(row.source_queue_id);
      const {
        rows: [source],
      } = await c.query<Pick<QueueRow, 'region' | 'fifo'>>('SELECT region, fifo FROM queues WHERE id = $1', [sourceId]);
      if (!source) return finish(0, Number(row.cursor), 'FAILED', b.missingQueueReason);
      const scope: MoveScope = { accountId: row.account_id, region: source.region, fifo: Boolean(source.fifo) };
      // Plain FOR UPDATE, not SKIP LOCKED: a message a receive holds for a moment is
      // waited for, not skipped past the cursor and left behind.
      const { rows } = await c.query<MessageRow>(
        'SELECT * FROM messages WHERE queue_id = $1 AND seq > $2 AND seq <= $3 ORDER BY seq LIMIT $4 FOR UPDATE',
        [sourceId, row.cursor, row.max_seq, b.scanLimit],
      );
      const messages = rows.map(toMessage);
      const queues = await this.destinations(
        c,
        scope,
        messages.map((m) => scopedAddress(scope, b.destination(m))),
      );
      const plan = planMoveBatch(messages, Number(row.cursor), b, scope, (a) => queues.get(a.name));
      const moves = plan.moves;
      let sentTo: ReturnType<typeof destinationsOf> = [];
      if (moves.length) {
        await insertMessages(
          c,
          moves.map((mv) => ({ queueId: mv.destination.id, message: b.rewrite(mv.message, mv.destination) })),
        );
        await c.query('DELETE FROM messages WHERE seq = ANY($1::bigint[])', [moves.map((mv) => mv.message.seq)]);
        // The engine counts the redrive's sends (and its receive and delete on the source).
        sentTo = destinationsOf(moves);
        touched.push(...sentTo.map((d) => d.queue.id));
      }
      const done = await finish(moves.length, plan.cursor, plan.status, plan.failureReason);
      return withFailure({ ...done, sentTo }, plan);
    });
    for (const id of touched) this.wakeups.wake(id);
    return result;
  }

  async moveByIds(queueId: number, messageIds: readonly string[], move: MoveById): Promise<MoveByIdResult[]> {
    const touched: number[] = [];
    const results = await inTransaction(this.pool, async (c) => {
      touched.length = 0;
      const out: MoveByIdResult[] = [];
      const {
        rows: [source],
      } = await c.query<Pick<QueueRow, 'account_id' | 'region' | 'fifo'>>(
        'SELECT account_id, region, fifo FROM queues WHERE id = $1',
        [queueId],
      );
      if (!source) return messageIds.map((id) => ({ id, outcome: 'notFound' as const }));
      // The same scope as a move task's: the source's account, region and type.
      const scope: MoveScope = { accountId: source.account_id, region: source.region, fifo: Boolean(source.fifo) };
      for (const id of messageIds) {
        const byId = (dead: string) =>
          c.query<MessageRow>(`SELECT * FROM messages WHERE queue_id = $1 AND message_id = $2 ${dead} FOR UPDATE`, [
            queueId,
            id,
          ]);
        // Dead-lettered messages through their partial index, any other by the queue's rows.
        const dead = await byId('AND dead_letter_source IS NOT NULL');
        const [row] = dead.rows.length ? dead.rows : (await byId('')).rows;
        const m = row && toMessage(row);
        const queues = await this.destinations(c, scope, [m && scopedAddress(scope, move.destination(m))]);
        const r = planMoveById(id, m, move, scope, (a) => queues.get(a.name));
        if (r.outcome !== 'moved') {
          out.push(r);
          continue;
        }
        const arriving = move.rewrite(r.message!, r.destination!);
        await insertMessages(c, [{ queueId: r.destination!.id, message: arriving }]);
        await c.query('DELETE FROM messages WHERE seq = $1', [r.message!.seq]);
        // The engine counts it as a move task's message (a receive, a delete and a send).
        touched.push(r.destination!.id);
        out.push({ ...r, newMessageId: arriving.messageId });
      }
      return out;
    });
    for (const id of touched) this.wakeups.wake(id);
    return results;
  }

  async inflightById(queueId: number, messageId: string, now: number): Promise<StoredMessage | undefined> {
    const {
      rows: [row],
    } = await this.pool.query<MessageRow>(
      'SELECT * FROM messages WHERE queue_id = $1 AND visible_at > $2 AND message_id = $3 AND receive_count > 0',
      [queueId, now, messageId],
    );
    return row && toMessage(row);
  }

  /** The queues of the task's scope (move-plan.ts) at the given addresses, by name. */
  private async destinations(
    c: pg.PoolClient,
    scope: MoveScope,
    addrs: (QueueAddress | undefined)[],
  ): Promise<Map<string, QueueRecord>> {
    const names = [...new Set(addrs.filter((a) => a !== undefined).map((a) => a.name))];
    if (names.length === 0) return new Map();
    const { rows } = await c.query<QueueRow>(
      'SELECT * FROM queues WHERE account_id = $1 AND region = $2 AND fifo = $3 AND name = ANY($4::text[])',
      [scope.accountId, scope.region, scope.fifo, names],
    );
    return new Map(rows.map((r) => [r.name, toQueue(r)]));
  }
}

import pg from 'pg';
import type { MessageCounts, NewMessage, QueueRecord, StoredMessage } from '../../engine/types.js';
import type {
  DeadLetterTarget, DeleteRule, LengthLimit, MoveBatch, MoveBatchResult, MoveTaskRecord, NewMoveTask, QueuePatch, QueueStats, ReceiptOutcome, ReceiptRef,
  ReceiveRequest, ReceiveResult, Store, VisibilityChange,
} from '../store.js';
import { toQueue, type QueueRow } from '../sqlite/rows.js';
import { PgDeadLetterOps } from './dead-letter-ops.js';
import { PgDeathOps } from './death-ops.js';
import { PgFifoOps } from './fifo-ops.js';
import { PgMessageOps } from './message-ops.js';
import { migrate } from './migrate.js';
import { Notifier, QUEUES_CHANNEL } from './notifier.js';
import { QueueCache } from './queue-cache.js';
import { inTransaction, query } from './sql.js';

/**
 * Deletes every message of a queue in the caller's transaction. The per-row triggers
 * are switched off for it (redrive.bulk_delete), so a purge of a million FIFO messages
 * is one bulk delete rather than a million group recomputations. The queue's groups and
 * depth are then rebuilt from what is left: messages a concurrent send committed
 * meanwhile, if any.
 */
async function deleteAllMessages(c: pg.PoolClient, queueId: number): Promise<void> {
  await c.query(`SET LOCAL redrive.bulk_delete = 'on'`);
  await c.query('DELETE FROM messages WHERE queue_id = $1', [queueId]);
  await c.query(`SET LOCAL redrive.bulk_delete = 'off'`);
  await c.query('DELETE FROM fifo_groups WHERE queue_id = $1', [queueId]);
  await c.query(
    `SELECT redrive_refresh_group($1, group_id) FROM (
       SELECT DISTINCT group_id FROM messages WHERE queue_id = $1 AND group_id IS NOT NULL) g`,
    [queueId],
  );
  await c.query(
    `UPDATE queue_depth SET (messages, bytes) = (
       SELECT count(*), coalesce(sum(octet_length(body)), 0) FROM messages WHERE queue_id = $1)
     WHERE queue_id = $1`,
    [queueId],
  );
}

export interface PostgresOptions {
  /** postgres://user@host:port/db; `?pool_size=N` sets the pool size (default 10). */
  url: string;
  /** How often waiting receives re-check their queue in case a NOTIFY was lost. */
  fallbackPollMs?: number;
  log?: (msg: string, err?: unknown) => void;
}

const SWEEP_BATCH = 5000;

/** Splits Redrive's own URL parameters from those node-postgres understands. */
export function parsePostgresUrl(url: string): { connectionString: string; poolSize: number } {
  const u = new URL(url);
  const size = u.searchParams.get('pool_size');
  u.searchParams.delete('pool_size');
  const poolSize = size === null ? 10 : Number(size);
  if (!Number.isInteger(poolSize) || poolSize < 1) throw new Error(`pool_size must be a positive integer, not "${size}"`);
  return { connectionString: u.toString(), poolSize };
}

/**
 * A store in PostgreSQL, shared by any number of Redrive nodes. Every operation is one
 * statement or one transaction; the only state in memory is a queue-record cache kept
 * exact by NOTIFY (queue-cache.ts) and the wake-up listeners of this node's long polls.
 */
export class PostgresStore implements Store {
  readonly kind = 'postgres';
  private readonly cache = new QueueCache();
  private readonly notifier: Notifier;
  private readonly messages: PgMessageOps;
  private readonly fifo: PgFifoOps;
  private readonly dl: PgDeadLetterOps;
  private readonly deaths: PgDeathOps;

  private constructor(private readonly pool: pg.Pool, clientConfig: pg.ClientConfig, opts: PostgresOptions) {
    this.notifier = new Notifier(pool, clientConfig, this.cache, { fallbackPollMs: opts.fallbackPollMs ?? 1500, log: opts.log });
    const touch = (id: number) => this.notifier.touch(id);
    this.deaths = new PgDeathOps(pool);
    this.messages = new PgMessageOps(pool, this.deaths, touch);
    this.fifo = new PgFifoOps(pool, this.deaths, touch);
    this.dl = new PgDeadLetterOps(pool, touch);
  }

  /** Connects, brings the schema up to date and starts listening for other nodes. */
  static async open(opts: PostgresOptions): Promise<PostgresStore> {
    const { connectionString, poolSize } = parsePostgresUrl(opts.url);
    const clientConfig: pg.ClientConfig = {
      connectionString, application_name: 'redrive',
      // The claims rely on READ COMMITTED re-checking rows that changed under a statement
      // (docs/scaling.md), whatever the database's default.
      options: '-c default_transaction_isolation=read\\ committed',
    };
    const pool = new pg.Pool({ ...clientConfig, max: poolSize });
    // An idle connection that breaks (a database restart) must not crash the node.
    pool.on('error', (err) => opts.log?.('idle PostgreSQL connection failed', err));
    try {
      await migrate(pool);
      const store = new PostgresStore(pool, clientConfig, opts);
      await store.notifier.start();
      return store;
    } catch (e) {
      await pool.end().catch(() => undefined);
      throw e;
    }
  }

  async createQueue(queue: Omit<QueueRecord, 'id'>): Promise<{ queue: QueueRecord; created: boolean }> {
    const { rows } = await query<QueueRow>(this.pool,
      `INSERT INTO queues (account_id, name, fifo, attributes, tags, created_at, modified_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (account_id, name) DO NOTHING RETURNING *`,
      [queue.accountId, queue.name, queue.fifo, JSON.stringify(queue.attributes), JSON.stringify(queue.tags), queue.createdAt, queue.modifiedAt],
    );
    if (rows[0]) return { queue: toQueue(rows[0]), created: true };
    const existing = await this.queueRow('account_id = $1 AND name = $2', [queue.accountId, queue.name]);
    return { queue: existing!, created: false };
  }

  private async queueRow(where: string, values: unknown[]): Promise<QueueRecord | undefined> {
    const { rows } = await this.pool.query<QueueRow>(`SELECT * FROM queues WHERE ${where}`, values);
    return rows[0] && toQueue(rows[0]);
  }

  getQueue(accountId: string, name: string): Promise<QueueRecord | undefined> {
    return this.cache.get(`${accountId}/${name}`, () => this.queueRow('account_id = $1 AND name = $2', [accountId, name]));
  }

  getQueueById(id: number): Promise<QueueRecord | undefined> {
    return this.queueRow('id = $1', [id]);
  }

  async listQueues(accountId: string, prefix: string, after: string | undefined, limit: number): Promise<QueueRecord[]> {
    const { rows } = await this.pool.query<QueueRow>(
      'SELECT * FROM queues WHERE account_id = $1 AND starts_with(name, $2) AND name > $3 ORDER BY name LIMIT $4',
      [accountId, prefix, after ?? '', limit],
    );
    return rows.map(toQueue);
  }

  /**
   * Runs a change to a queue row and tells every node to drop its cached copy. The
   * NOTIFY is part of the transaction, so it is delivered only once the change is
   * visible; this node drops its own copy at once.
   */
  private async changeQueue<T>(id: number, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    const result = await inTransaction(this.pool, async (c) => {
      const r = await fn(c);
      await c.query(`SELECT pg_notify('${QUEUES_CHANNEL}', $1)`, [String(id)]);
      return r;
    });
    this.cache.forget(id);
    return result;
  }

  updateQueue(id: number, patch: QueuePatch): Promise<QueueRecord | undefined> {
    return this.changeQueue(id, async (c) => {
      const { rows } = await c.query<QueueRow>('SELECT * FROM queues WHERE id = $1 FOR UPDATE', [id]);
      if (!rows[0]) return undefined;
      const q = toQueue(rows[0]);
      const attributes = { ...q.attributes, ...patch.setAttributes };
      for (const k of patch.removeAttributes ?? []) delete attributes[k];
      const tags = { ...q.tags, ...patch.setTags };
      for (const k of patch.removeTags ?? []) delete tags[k];
      const modifiedAt = patch.modifiedAt ?? q.modifiedAt;
      await c.query('UPDATE queues SET attributes = $1, tags = $2, modified_at = $3 WHERE id = $4', [
        JSON.stringify(attributes), JSON.stringify(tags), modifiedAt, id,
      ]);
      return { ...q, attributes, tags, modifiedAt };
    });
  }

  deleteQueue(id: number): Promise<boolean> {
    return this.changeQueue(id, async (c) => {
      await deleteAllMessages(c, id);
      for (const table of ['queue_stats', 'fifo_dedup', 'receive_attempts', 'fifo_groups', 'queue_depth']) {
        await c.query(`DELETE FROM ${table} WHERE queue_id = $1`, [id]);
      }
      const { rowCount } = await c.query('DELETE FROM queues WHERE id = $1', [id]);
      return rowCount === 1;
    });
  }

  async purgeQueue(id: number, now: number, cooldownMs: number): Promise<boolean> {
    return this.changeQueue(id, async (c) => {
      // The row lock makes the cooldown hold across nodes: one purge wins, the others wait and see it.
      const { rowCount } = await c.query(
        'UPDATE queues SET last_purge_at = $1 WHERE id = $2 AND (last_purge_at IS NULL OR last_purge_at <= $3)',
        [now, id, now - cooldownMs],
      );
      if (rowCount === 0) return false;
      await deleteAllMessages(c, id);
      return true;
    });
  }

  send(queueId: number, messages: NewMessage[], limit?: LengthLimit): Promise<StoredMessage[]> {
    return this.messages.send(queueId, messages, limit);
  }

  receive(queueId: number, request: ReceiveRequest): Promise<ReceiveResult> {
    return request.fifo ? this.fifo.receive(queueId, request) : this.messages.receiveStandard(queueId, request);
  }

  deleteMessages(queueId: number, receipts: ReceiptRef[], rule: DeleteRule): Promise<ReceiptOutcome[]> {
    return this.messages.deleteMessages(queueId, receipts, rule);
  }

  changeVisibility(queueId: number, changes: VisibilityChange[], now: number): Promise<ReceiptOutcome[]> {
    return this.messages.changeVisibility(queueId, changes, now);
  }

  async countInflight(queueId: number, now: number): Promise<number> {
    // The range condition on visible_at lets messages_ready skip the visible backlog.
    const { rows } = await this.pool.query<{ n: string }>(
      'SELECT count(*) AS n FROM messages WHERE queue_id = $1 AND visible_at > $2 AND receive_count > 0',
      [queueId, now],
    );
    return Number(rows[0]!.n);
  }

  async countMessages(queueId: number, now: number): Promise<MessageCounts> {
    const { rows } = await this.pool.query<{ visible: string; inflight: string; delayed: string }>(
      `SELECT count(*) FILTER (WHERE visible_at <= $2) AS visible,
              count(*) FILTER (WHERE visible_at > $2 AND receive_count > 0) AS inflight,
              count(*) FILTER (WHERE visible_at > $2 AND receive_count = 0) AS delayed
         FROM messages WHERE queue_id = $1`,
      [queueId, now],
    );
    const r = rows[0]!;
    return { visible: Number(r.visible), inflight: Number(r.inflight), delayed: Number(r.delayed) };
  }

  async nextVisibleAt(queueId: number, now: number): Promise<number | undefined> {
    const { rows } = await this.pool.query<{ t: string | null }>(
      'SELECT min(visible_at) AS t FROM messages WHERE queue_id = $1 AND visible_at > $2',
      [queueId, now],
    );
    return rows[0]!.t === null ? undefined : Number(rows[0]!.t);
  }

  async allQueues(): Promise<QueueRecord[]> {
    const { rows } = await this.pool.query<QueueRow>('SELECT * FROM queues ORDER BY id');
    return rows.map(toQueue);
  }

  async sweepExpired(now: number): Promise<number> {
    const a = await query(this.pool, 'DELETE FROM fifo_dedup WHERE expires_at <= $1', [now]);
    const b = await query(this.pool, 'DELETE FROM receive_attempts WHERE expires_at <= $1', [now]);
    return (a.rowCount ?? 0) + (b.rowCount ?? 0);
  }

  async deleteSentBefore(queueId: number, cutoff: number): Promise<number> {
    let total = 0;
    // Batches keep each transaction short, so a large sweep never holds many locks.
    for (;;) {
      const { rowCount } = await query(this.pool,
        `DELETE FROM messages WHERE seq IN (
           SELECT seq FROM messages WHERE queue_id = $1 AND sent_at < $2 LIMIT ${SWEEP_BATCH})`,
        [queueId, cutoff],
      );
      total += rowCount ?? 0;
      if ((rowCount ?? 0) < SWEEP_BATCH) return total;
    }
  }

  async expireMessages(queueId: number, now: number, limit: number, target: DeadLetterTarget | undefined): Promise<number> {
    const { n, touched } = await this.deaths.expire(queueId, now, limit, target);
    for (const id of touched) this.notifier.touch(id);
    return n;
  }

  async rejectMessage(queueId: number, receipt: ReceiptRef, now: number, target: DeadLetterTarget): Promise<ReceiptOutcome> {
    const { outcome, touched } = await this.deaths.reject(queueId, receipt, now, target);
    for (const id of touched) this.notifier.touch(id);
    return outcome;
  }

  async secret(name: string, fresh: string): Promise<string> {
    // The first node to ask stores its value; every node then reads the same one.
    await query(this.pool, 'INSERT INTO secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [name, fresh]);
    const { rows } = await query<{ value: string }>(this.pool, 'SELECT value FROM secrets WHERE name = $1', [name]);
    return rows[0]!.value;
  }

  async tryLease(name: string, owner: string, now: number, ttlMs: number): Promise<boolean> {
    // Taken when free, expired, or already ours (a renewal); one statement, so two nodes
    // asking at once cannot both win.
    const { rows } = await query(this.pool,
      `INSERT INTO leases AS l (name, owner, until) VALUES ($1, $2, $4)
       ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, until = excluded.until
        WHERE l.owner = excluded.owner OR l.until <= $3
       RETURNING 1`,
      [name, owner, now, now + ttlMs],
    );
    return rows.length === 1;
  }

  queueStats(queueId: number): Promise<QueueStats> {
    return this.dl.queueStats(queueId);
  }

  peekMessages(queueId: number, afterSeq: number, limit: number): Promise<StoredMessage[]> {
    return this.dl.peekMessages(queueId, afterSeq, limit);
  }

  createMoveTask(task: NewMoveTask, maxActivePerAccount: number): Promise<MoveTaskRecord | 'sourceBusy' | 'accountLimit'> {
    return this.dl.createMoveTask(task, maxActivePerAccount);
  }

  getMoveTask(id: string): Promise<MoveTaskRecord | undefined> {
    return this.dl.getMoveTask(id);
  }

  listMoveTasks(sourceQueueId: number, limit: number): Promise<MoveTaskRecord[]> {
    return this.dl.listMoveTasks(sourceQueueId, limit);
  }

  cancelMoveTask(id: string): Promise<MoveTaskRecord | undefined> {
    return this.dl.cancelMoveTask(id);
  }

  leaseMoveTasks(owner: string, now: number, leaseUntil: number): Promise<MoveTaskRecord[]> {
    return this.dl.leaseMoveTasks(owner, now, leaseUntil);
  }

  releaseMoveTasks(owner: string): Promise<void> {
    return this.dl.releaseMoveTasks(owner);
  }

  runMoveBatch(taskId: string, batch: MoveBatch): Promise<MoveBatchResult> {
    return this.dl.runMoveBatch(taskId, batch);
  }

  onAvailable(queueId: number, listener: () => void): () => void {
    return this.notifier.on(queueId, listener);
  }

  async close(): Promise<void> {
    await this.notifier.close();
    await this.pool.end();
  }
}

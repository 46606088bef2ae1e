import type pg from 'pg';
import type { QueueAddress } from '../../engine/kernel/addressing.js';
import type { NewQueue, QueueOwner, QueuePatch, QueueStore } from '../../engine/store/queues.js';
import type { QueueRecord } from '../../engine/kernel/types.js';
import type { QueueCache } from '../queue-cache.js';
import { toQueue, type QueueRow } from '../rows.js';
import { inTransaction, query, STATS_SHARD } from './sql.js';
import { QUEUES_CHANNEL } from './wakeups.js';

/**
 * Deletes every message of a queue in the caller's transaction. The per-row triggers
 * are switched off for it (redrive.bulk_delete), so a purge of a million FIFO messages
 * is one bulk delete rather than a million group recomputations. Its count (queue_count)
 * is lowered by the number deleted; the queue's groups and
 * depth are then rebuilt from what is left: messages a concurrent send committed
 * meanwhile, if any.
 */
async function deleteAllMessages(c: pg.PoolClient, queueId: number): Promise<void> {
  await c.query(`SET LOCAL redrive.bulk_delete = 'on'`);
  const { rowCount } = await c.query('DELETE FROM messages WHERE queue_id = $1', [queueId]);
  await c.query(`SET LOCAL redrive.bulk_delete = 'off'`);
  // What the count trigger would have subtracted (migrations/000009.sql), in this backend's shard.
  await c.query(
    `INSERT INTO queue_count AS c (queue_id, shard, messages) VALUES ($1, ${STATS_SHARD}, $2)
     ON CONFLICT (queue_id, shard) DO UPDATE SET messages = c.messages + excluded.messages`,
    [queueId, -(rowCount ?? 0)],
  );
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

/**
 * Inserts the queue unless one of that name exists; returns whichever is stored. Also
 * run inside another operation's transaction (the cycles queue, see dead-letters.ts).
 */
export async function createQueue(
  db: pg.Pool | pg.PoolClient,
  queue: NewQueue,
): Promise<{ queue: QueueRecord; created: boolean }> {
  const { rows } = await query<QueueRow>(
    db,
    `INSERT INTO queues (account_id, region, name, fifo, attributes, tags, created_at, modified_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (account_id, region, name) DO NOTHING
     RETURNING *, pg_notify('${QUEUES_CHANNEL}', id::text)`,
    [
      queue.accountId,
      queue.region,
      queue.name,
      queue.fifo,
      JSON.stringify(queue.attributes),
      JSON.stringify(queue.tags),
      queue.createdAt,
      queue.modifiedAt,
    ],
  );
  if (rows[0]) return { queue: toQueue(rows[0]), created: true };
  const existing = await db.query<QueueRow>(
    'SELECT * FROM queues WHERE account_id = $1 AND region = $2 AND name = $3',
    [queue.accountId, queue.region, queue.name],
  );
  return { queue: toQueue(existing.rows[0]!), created: false };
}

/** Queue rows, with what dies with a queue: its messages, counters, FIFO state and depth. */
export class PostgresQueues implements QueueStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly cache: QueueCache,
  ) {}

  async create(queue: NewQueue): Promise<{ queue: QueueRecord; created: boolean }> {
    const out = await createQueue(this.pool, queue);
    // Every node's list of all queues lacks it: the NOTIFY above tells the others.
    if (out.created) this.cache.forget(out.queue.id);
    return out;
  }

  private async queueRow(where: string, values: unknown[]): Promise<QueueRecord | undefined> {
    const { rows } = await this.pool.query<QueueRow>(`SELECT * FROM queues WHERE ${where}`, values);
    return rows[0] && toQueue(rows[0]);
  }

  get({ accountId, region, name }: QueueAddress): Promise<QueueRecord | undefined> {
    return this.cache.get(`${accountId}/${region}/${name}`, () =>
      this.queueRow('account_id = $1 AND region = $2 AND name = $3', [accountId, region, name]),
    );
  }

  byId(id: number): Promise<QueueRecord | undefined> {
    return this.queueRow('id = $1', [id]);
  }

  async list(
    { accountId, region }: QueueOwner,
    prefix: string,
    after: string | undefined,
    limit: number,
  ): Promise<QueueRecord[]> {
    const { rows } = await this.pool.query<QueueRow>(
      'SELECT * FROM queues WHERE account_id = $1 AND region = $2 AND starts_with(name, $3) AND name > $4 ORDER BY name LIMIT $5',
      [accountId, region, prefix, after ?? '', limit],
    );
    return rows.map(toQueue);
  }

  all(): Promise<readonly QueueRecord[]> {
    return this.cache.all(
      async () => (await this.pool.query<QueueRow>('SELECT * FROM queues ORDER BY id')).rows.map(toQueue),
      async (ids) =>
        (
          await this.pool.query<QueueRow>('SELECT * FROM queues WHERE id = ANY($1::bigint[]) ORDER BY id', [ids])
        ).rows.map(toQueue),
    );
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

  update(id: number, patch: QueuePatch): Promise<QueueRecord | undefined> {
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
        JSON.stringify(attributes),
        JSON.stringify(tags),
        modifiedAt,
        id,
      ]);
      return { ...q, attributes, tags, modifiedAt };
    });
  }

  delete(id: number): Promise<boolean> {
    return this.changeQueue(id, async (c) => {
      await deleteAllMessages(c, id);
      for (const table of ['fifo_dedup', 'receive_attempts', 'fifo_groups', 'queue_depth', 'queue_count']) {
        await c.query(`DELETE FROM ${table} WHERE queue_id = $1`, [id]);
      }
      const { rowCount } = await c.query('DELETE FROM queues WHERE id = $1', [id]);
      return rowCount === 1;
    });
  }

  async purge(id: number, now: number, cooldownMs: number): Promise<boolean> {
    return this.changeQueue(id, async (c) => {
      // The row lock makes the cooldown hold across nodes: one purge wins, the others wait and see it.
      const { rowCount } = await c.query(
        'UPDATE queues SET last_purge_at = $1 WHERE id = $2 AND (last_purge_at IS NULL OR last_purge_at <= $3)',
        [now, id, now - cooldownMs],
      );
      if (rowCount === 0) return false;
      await deleteAllMessages(c, id);
      // SQS forgets deduplication ids with the messages: a send reusing one stores a new message.
      await c.query('DELETE FROM fifo_dedup WHERE queue_id = $1', [id]);
      await c.query('DELETE FROM receive_attempts WHERE queue_id = $1', [id]);
      return true;
    });
  }
}

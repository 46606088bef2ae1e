import type Database from 'better-sqlite3';
import type { QueueAddress } from '../../engine/kernel/addressing.js';
import type { NewQueue, QueueOwner, QueuePatch, QueueStore } from '../../engine/store/queues.js';
import type { QueueRecord } from '../../engine/kernel/types.js';
import { QueueCache } from '../queue-cache.js';
import { toQueue, type QueueRow } from '../rows.js';
import type { GroupCommit } from './group-commit.js';
import { BOUND_LIMIT } from './sql.js';

/** Queue rows, with what dies with a queue: its messages, FIFO state and depth. */
export class SqliteQueues implements QueueStore {
  /** This process is the database's only writer, so the cache is exact. */
  private readonly cache = new QueueCache(true);
  private readonly sql;

  constructor(
    db: Database.Database,
    private readonly commit: GroupCommit,
  ) {
    this.sql = {
      insert: db.prepare(
        `INSERT INTO queues (account_id, region, name, fifo, attributes, tags, created_at, modified_at, last_purge_at)
         VALUES (?,?,?,?,?,?,?,?,NULL) ON CONFLICT (account_id, region, name) DO NOTHING`,
      ),
      byName: db.prepare('SELECT * FROM queues WHERE account_id = ? AND region = ? AND name = ?'),
      byId: db.prepare('SELECT * FROM queues WHERE id = ?'),
      list: db.prepare(
        `SELECT * FROM queues WHERE account_id = ? AND region = ? AND substr(name, 1, length(?)) = ? AND name > ? ORDER BY name ${BOUND_LIMIT}`,
      ),
      all: db.prepare('SELECT * FROM queues ORDER BY id'),
      byIds: db.prepare('SELECT * FROM queues WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id'),
      update: db.prepare('UPDATE queues SET attributes = ?, tags = ?, modified_at = ? WHERE id = ?'),
      delete: db.prepare('DELETE FROM queues WHERE id = ?'),
      deleteMessages: db.prepare('DELETE FROM deliveries WHERE queue_id = ?'),
      // What else a queue owns.
      deleteState: ['fifo_dedup', 'receive_attempts', 'queue_depth'].map((t) =>
        db.prepare(`DELETE FROM ${t} WHERE queue_id = ?`),
      ),
      // A purge also forgets deduplication ids and receive attempts, as SQS does: a send
      // that reuses an id after a purge stores a new message.
      forgetFifo: ['fifo_dedup', 'receive_attempts'].map((t) => db.prepare(`DELETE FROM ${t} WHERE queue_id = ?`)),
      markPurge: db.prepare(
        'UPDATE queues SET last_purge_at = ? WHERE id = ? AND (last_purge_at IS NULL OR last_purge_at <= ?)',
      ),
    };
  }

  create(queue: NewQueue): Promise<{ queue: QueueRecord; created: boolean }> {
    return this.commit.run(() => this.insert(queue));
  }

  /** Inserts the queue unless it exists, in the running transaction. */
  insert(queue: NewQueue): { queue: QueueRecord; created: boolean } {
    const res = this.sql.insert.run(
      queue.accountId,
      queue.region,
      queue.name,
      queue.fifo ? 1 : 0,
      JSON.stringify(queue.attributes),
      JSON.stringify(queue.tags),
      queue.createdAt,
      queue.modifiedAt,
    );
    const row = this.sql.byName.get(queue.accountId, queue.region, queue.name) as QueueRow;
    if (res.changes === 1) this.cache.forget(row.id);
    return { queue: toQueue(row), created: res.changes === 1 };
  }

  get({ accountId, region, name }: QueueAddress): Promise<QueueRecord | undefined> {
    return this.cache.get(cacheKey({ accountId, region, name }), async () => {
      const row = this.sql.byName.get(accountId, region, name) as QueueRow | undefined;
      return row && toQueue(row);
    });
  }

  cached(address: QueueAddress): QueueRecord | undefined {
    return this.cache.peek(cacheKey(address));
  }

  async byId(id: number): Promise<QueueRecord | undefined> {
    const row = this.sql.byId.get(id) as QueueRow | undefined;
    return row && toQueue(row);
  }

  async list(
    { accountId, region }: QueueOwner,
    prefix: string,
    after: string | undefined,
    limit: number,
  ): Promise<QueueRecord[]> {
    return (this.sql.list.all(accountId, region, prefix, prefix, after ?? '', limit) as QueueRow[]).map(toQueue);
  }

  all(): Promise<readonly QueueRecord[]> {
    return this.cache.all(
      async () => (this.sql.all.all() as QueueRow[]).map(toQueue),
      async (ids) => (this.sql.byIds.all(JSON.stringify(ids)) as QueueRow[]).map(toQueue),
    );
  }

  update(id: number, patch: QueuePatch): Promise<QueueRecord | undefined> {
    return this.commit.run(() => {
      const row = this.sql.byId.get(id) as QueueRow | undefined;
      if (!row) return undefined;
      const q = toQueue(row);
      this.cache.forget(id);
      const attributes = { ...q.attributes, ...patch.setAttributes };
      for (const k of patch.removeAttributes ?? []) delete attributes[k];
      const tags = { ...q.tags, ...patch.setTags };
      for (const k of patch.removeTags ?? []) delete tags[k];
      this.sql.update.run(JSON.stringify(attributes), JSON.stringify(tags), patch.modifiedAt ?? q.modifiedAt, id);
      return { ...q, attributes, tags, modifiedAt: patch.modifiedAt ?? q.modifiedAt };
    });
  }

  delete(id: number): Promise<boolean> {
    return this.commit.run(() => {
      this.cache.forget(id);
      this.sql.deleteMessages.run(id);
      for (const statement of this.sql.deleteState) statement.run(id);
      return this.sql.delete.run(id).changes === 1;
    });
  }

  purge(id: number, now: number, cooldownMs: number): Promise<boolean> {
    return this.commit.run(() => {
      if (this.sql.markPurge.run(now, id, now - cooldownMs).changes === 0) return false;
      this.cache.forget(id);
      this.sql.deleteMessages.run(id);
      for (const forget of this.sql.forgetFifo) forget.run(id);
      return true;
    });
  }
}

/** A queue's key in the cache: its account, region and name. */
const cacheKey = ({ accountId, region, name }: QueueAddress) => `${accountId}/${region}/${name}`;

import type Database from 'better-sqlite3';
import {
  canonicalJson,
  type AmqpQueueRecord,
  type BindingRecord,
  type ExchangeRecord,
  type ExchangeStore,
} from '../../engine/store/exchanges.js';
import { type BindingRow, bindingKey, bindingOf } from '../binding-rows.js';
import type { GroupCommit } from './group-commit.js';

interface ExchangeRow {
  account_id: string;
  name: string;
  type: string;
  durable: number;
  auto_delete: number;
  internal: number;
  arguments: string;
}
interface QueueRow {
  queue_id: number;
  durable: number;
  exclusive: number;
  auto_delete: number;
  arguments: string;
}

const exchangeOf = (r: ExchangeRow): ExchangeRecord => ({
  accountId: r.account_id,
  name: r.name,
  type: r.type,
  durable: r.durable === 1,
  autoDelete: r.auto_delete === 1,
  internal: r.internal === 1,
  arguments: JSON.parse(r.arguments) as Record<string, unknown>,
});

export class SqliteExchanges implements ExchangeStore {
  private readonly sql;

  constructor(
    db: Database.Database,
    private readonly commit: GroupCommit,
  ) {
    this.sql = {
      insert: db.prepare(
        `INSERT OR IGNORE INTO amqp_exchanges (account_id, name, type, durable, auto_delete, internal, arguments)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
      ),
      get: db.prepare('SELECT * FROM amqp_exchanges WHERE account_id = ? AND name = ?'),
      delete: db.prepare('DELETE FROM amqp_exchanges WHERE account_id = ? AND name = ?'),
      deleteFrom: db.prepare('DELETE FROM amqp_bindings WHERE account_id = ? AND source = ?'),
      deleteTo: db.prepare(
        'DELETE FROM amqp_bindings WHERE account_id = ? AND destination_kind = ? AND destination = ?',
      ),
      bind: db.prepare(
        `INSERT OR IGNORE INTO amqp_bindings (account_id, source, destination_kind, destination, routing_key, arguments)
         VALUES (?, ?, ?, ?, ?, ?)`,
      ),
      unbind: db.prepare(
        `DELETE FROM amqp_bindings WHERE account_id = ? AND source = ? AND destination_kind = ? AND destination = ?
         AND routing_key = ? AND arguments = ?`,
      ),
      bindings: db.prepare('SELECT * FROM amqp_bindings WHERE account_id = ? AND source = ? ORDER BY id'),
      sourcesOf: db
        .prepare(
          'SELECT DISTINCT source FROM amqp_bindings WHERE account_id = ? AND destination_kind = ? AND destination = ? ORDER BY source',
        )
        .pluck(),
      list: db.prepare('SELECT * FROM amqp_exchanges WHERE account_id = ? ORDER BY name LIMIT +?'),
      allBindings: db.prepare('SELECT * FROM amqp_bindings WHERE account_id = ? ORDER BY id LIMIT +?'),
      setQueue: db.prepare(
        `INSERT OR REPLACE INTO amqp_queues (queue_id, durable, exclusive, auto_delete, arguments) VALUES (?, ?, ?, ?, ?)`,
      ),
      queue: db.prepare('SELECT * FROM amqp_queues WHERE queue_id = ?'),
    };
  }

  declare(e: ExchangeRecord): Promise<{ exchange: ExchangeRecord; created: boolean }> {
    return this.commit.run(() => {
      const created =
        this.sql.insert.run(
          e.accountId,
          e.name,
          e.type,
          +e.durable,
          +e.autoDelete,
          +e.internal,
          canonicalJson(e.arguments),
        ).changes === 1;
      return { exchange: exchangeOf(this.sql.get.get(e.accountId, e.name) as ExchangeRow), created };
    });
  }

  async get(accountId: string, name: string): Promise<ExchangeRecord | undefined> {
    const r = this.sql.get.get(accountId, name) as ExchangeRow | undefined;
    return r && exchangeOf(r);
  }

  delete(accountId: string, name: string): Promise<boolean> {
    return this.commit.run(() => {
      const found = this.sql.delete.run(accountId, name).changes === 1;
      this.sql.deleteFrom.run(accountId, name);
      this.sql.deleteTo.run(accountId, 'exchange', name);
      return found;
    });
  }

  bind(b: BindingRecord): Promise<boolean> {
    return this.commit.run(() => this.sql.bind.run(...bindingKey(b)).changes === 1);
  }

  unbind(b: BindingRecord): Promise<boolean> {
    return this.commit.run(() => this.sql.unbind.run(...bindingKey(b)).changes === 1);
  }

  async list(accountId: string, limit: number): Promise<ExchangeRecord[]> {
    return (this.sql.list.all(accountId, limit) as ExchangeRow[]).map(exchangeOf);
  }

  async allBindings(accountId: string, limit: number): Promise<BindingRecord[]> {
    return (this.sql.allBindings.all(accountId, limit) as BindingRow[]).map(bindingOf);
  }

  async bindings(accountId: string, source: string): Promise<BindingRecord[]> {
    return (this.sql.bindings.all(accountId, source) as BindingRow[]).map(bindingOf);
  }

  async sourcesOf(accountId: string, kind: BindingRecord['destinationKind'], destination: string): Promise<string[]> {
    return this.sql.sourcesOf.all(accountId, kind, destination) as string[];
  }

  unbindDestination(accountId: string, kind: BindingRecord['destinationKind'], destination: string): Promise<number> {
    return this.commit.run(() => this.sql.deleteTo.run(accountId, kind, destination).changes);
  }

  async setQueue(q: AmqpQueueRecord): Promise<void> {
    await this.commit.run(() =>
      this.sql.setQueue.run(q.queueId, +q.durable, +q.exclusive, +q.autoDelete, canonicalJson(q.arguments)),
    );
  }

  async queue(queueId: number): Promise<AmqpQueueRecord | undefined> {
    const r = this.sql.queue.get(queueId) as QueueRow | undefined;
    return (
      r && {
        queueId: r.queue_id,
        durable: r.durable === 1,
        exclusive: r.exclusive === 1,
        autoDelete: r.auto_delete === 1,
        arguments: JSON.parse(r.arguments) as Record<string, unknown>,
      }
    );
  }
}

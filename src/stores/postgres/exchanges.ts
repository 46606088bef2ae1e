import type pg from 'pg';
import {
  canonicalJson,
  type AmqpQueueRecord,
  type BindingRecord,
  type ExchangeRecord,
  type ExchangeStore,
} from '../../engine/store/exchanges.js';
import { type BindingRow, bindingKey, bindingOf } from '../binding-rows.js';
import { query } from './sql.js';

interface ExchangeRow {
  account_id: string;
  name: string;
  type: string;
  durable: boolean;
  auto_delete: boolean;
  internal: boolean;
  arguments: string;
}
interface QueueRow {
  queue_id: string;
  durable: boolean;
  exclusive: boolean;
  auto_delete: boolean;
  arguments: string;
}

const exchangeOf = (r: ExchangeRow): ExchangeRecord => ({
  accountId: r.account_id,
  name: r.name,
  type: r.type,
  durable: r.durable,
  autoDelete: r.auto_delete,
  internal: r.internal,
  arguments: JSON.parse(r.arguments) as Record<string, unknown>,
});

export class PostgresExchanges implements ExchangeStore {
  constructor(private readonly pool: pg.Pool) {}

  async declare(e: ExchangeRecord): Promise<{ exchange: ExchangeRecord; created: boolean }> {
    const { rowCount } = await query(
      this.pool,
      `INSERT INTO amqp_exchanges (account_id, name, type, durable, auto_delete, internal, arguments)
       VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (account_id, name) DO NOTHING`,
      [e.accountId, e.name, e.type, e.durable, e.autoDelete, e.internal, canonicalJson(e.arguments)],
    );
    return { exchange: (await this.get(e.accountId, e.name))!, created: rowCount === 1 };
  }

  async get(accountId: string, name: string): Promise<ExchangeRecord | undefined> {
    const { rows } = await query<ExchangeRow>(
      this.pool,
      'SELECT * FROM amqp_exchanges WHERE account_id = $1 AND name = $2',
      [accountId, name],
    );
    return rows[0] && exchangeOf(rows[0]);
  }

  async delete(accountId: string, name: string): Promise<boolean> {
    // One statement: the exchange and its bindings either way go together.
    const { rows } = await query<{ found: boolean }>(
      this.pool,
      `WITH e AS (DELETE FROM amqp_exchanges WHERE account_id = $1 AND name = $2 RETURNING 1),
            b AS (DELETE FROM amqp_bindings WHERE account_id = $1
                    AND (source = $2 OR (destination_kind = 'exchange' AND destination = $2)) RETURNING 1)
       SELECT EXISTS (SELECT 1 FROM e) AS found, (SELECT count(*) FROM b) AS bindings`,
      [accountId, name],
    );
    return rows[0]!.found;
  }

  async bind(b: BindingRecord): Promise<boolean> {
    const { rowCount } = await query(
      this.pool,
      `INSERT INTO amqp_bindings (account_id, source, destination_kind, destination, routing_key, arguments)
       VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
      bindingKey(b),
    );
    return rowCount === 1;
  }

  async unbind(b: BindingRecord): Promise<boolean> {
    const { rowCount } = await query(
      this.pool,
      `DELETE FROM amqp_bindings WHERE account_id = $1 AND source = $2 AND destination_kind = $3 AND destination = $4
       AND routing_key = $5 AND arguments = $6`,
      bindingKey(b),
    );
    return rowCount === 1;
  }

  async list(accountId: string, limit: number): Promise<ExchangeRecord[]> {
    const { rows } = await query<ExchangeRow>(
      this.pool,
      'SELECT * FROM amqp_exchanges WHERE account_id = $1 ORDER BY name COLLATE "C" LIMIT $2',
      [accountId, limit],
    );
    return rows.map(exchangeOf);
  }

  async allBindings(accountId: string, limit: number): Promise<BindingRecord[]> {
    const { rows } = await query<BindingRow>(
      this.pool,
      'SELECT * FROM amqp_bindings WHERE account_id = $1 ORDER BY id LIMIT $2',
      [accountId, limit],
    );
    return rows.map(bindingOf);
  }

  async bindings(accountId: string, source: string): Promise<BindingRecord[]> {
    const { rows } = await query<BindingRow>(
      this.pool,
      'SELECT * FROM amqp_bindings WHERE account_id = $1 AND source = $2 ORDER BY id',
      [accountId, source],
      'amqp-bindings',
    );
    return rows.map(bindingOf);
  }

  async sourcesOf(accountId: string, kind: BindingRecord['destinationKind'], destination: string): Promise<string[]> {
    const { rows } = await query<{ source: string }>(
      this.pool,
      `SELECT DISTINCT source FROM amqp_bindings
        WHERE account_id = $1 AND destination_kind = $2 AND destination = $3 ORDER BY source`,
      [accountId, kind, destination],
      'amqp-sources-of',
    );
    return rows.map((r) => r.source);
  }

  async unbindDestination(
    accountId: string,
    kind: BindingRecord['destinationKind'],
    destination: string,
  ): Promise<number> {
    const { rowCount } = await query(
      this.pool,
      'DELETE FROM amqp_bindings WHERE account_id = $1 AND destination_kind = $2 AND destination = $3',
      [accountId, kind, destination],
    );
    return rowCount ?? 0;
  }

  async setQueue(q: AmqpQueueRecord): Promise<void> {
    await query(
      this.pool,
      `INSERT INTO amqp_queues (queue_id, durable, exclusive, auto_delete, arguments) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (queue_id) DO UPDATE SET durable = excluded.durable, exclusive = excluded.exclusive,
         auto_delete = excluded.auto_delete, arguments = excluded.arguments`,
      [q.queueId, q.durable, q.exclusive, q.autoDelete, canonicalJson(q.arguments)],
    );
  }

  async queue(queueId: number): Promise<AmqpQueueRecord | undefined> {
    const { rows } = await query<QueueRow>(this.pool, 'SELECT * FROM amqp_queues WHERE queue_id = $1', [queueId]);
    const r = rows[0];
    return (
      r && {
        queueId: Number(r.queue_id),
        durable: r.durable,
        exclusive: r.exclusive,
        autoDelete: r.auto_delete,
        arguments: JSON.parse(r.arguments) as Record<string, unknown>,
      }
    );
  }
}

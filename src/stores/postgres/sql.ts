import type pg from 'pg';
import type { NewMessage } from '../../engine/kernel/types.js';
import { MESSAGE_COLUMNS, messageValues, type MessageRow } from '../rows.js';

/** No dead-letter rule: no receive count is too high. */
export const NO_LIMIT = 2 ** 31 - 1;

/**
 * A row of a receive statement: `poison` rows were received too often and are not claimed.
 * The standard receive's row with `poison` NULL is no message: it carries `next_visible`.
 */
export type ReceiveRow = MessageRow & { poison: boolean | null; next_visible?: string | null };

const ALL_COLUMNS = [
  'seq',
  ...MESSAGE_COLUMNS,
  'first_received_at',
  'received_at',
  'receipt_token',
  'dead_lettered_at',
];

/** Every column of messages, qualified by `alias`, for statements that must list them (UNION branches). */
export function messageColumns(alias: string): string {
  return ALL_COLUMNS.map((c) => `${alias}.${c}`).join(', ');
}

/** As many NULLs as messageColumns lists: a UNION branch that gives no message. */
export function nullColumns(): string {
  return ALL_COLUMNS.map(() => 'NULL').join(', ');
}

/**
 * Deadlocks (two writers locking FIFO groups in opposite orders) and serialization
 * failures are resolved by PostgreSQL aborting one transaction; it is retried, since
 * each operation is one atomic step that left nothing behind.
 */
const RETRYABLE = new Set(['40P01', '40001']);
const ATTEMPTS = 5;

function retryable(e: unknown): boolean {
  return RETRYABLE.has((e as { code?: string }).code ?? '');
}

/**
 * One statement, retried on deadlock. A `name` makes it a prepared statement, parsed
 * and planned once per connection: worth it for the statements every message takes.
 */
export async function query<R extends pg.QueryResultRow = pg.QueryResultRow>(
  db: pg.Pool | pg.PoolClient,
  text: string,
  values?: unknown[],
  name?: string,
): Promise<pg.QueryResult<R>> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.query<R>({ text, values, name });
    } catch (e) {
      // Inside a transaction the error has aborted it: the caller's transaction retries.
      if (attempt >= ATTEMPTS || !retryable(e) || !('totalCount' in db)) throw e;
    }
  }
}

/** Runs `fn` in one transaction (READ COMMITTED), retried on deadlock. */
export async function inTransaction<T>(pool: pg.Pool, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const client = await pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const result = await fn(client);
      await client.query('COMMIT');
      return result;
    } catch (e) {
      await client.query('ROLLBACK').catch((err: Error) => (broken = err));
      if (attempt >= ATTEMPTS || !retryable(e)) throw e;
    } finally {
      // A connection that cannot even roll back is dropped rather than reused.
      client.release(broken);
    }
  }
}

/**
 * The shard of a sharded counter table (queue_count, queue_activity) this connection adds
 * to, so concurrent writers never wait on one row; a read sums the shards.
 */
export const STATS_SHARD = 'pg_backend_pid() % 16';

/** PostgreSQL types of the columns a message is inserted with (rows.ts lists them). */
const COLUMN_TYPES: Record<string, string> = {
  queue_id: 'bigint',
  message_id: 'text',
  body: 'text',
  attributes: 'text',
  system_attributes: 'text',
  md5_body: 'text',
  md5_attributes: 'text',
  md5_system: 'text',
  sender_id: 'text',
  sent_at: 'bigint',
  visible_at: 'bigint',
  receive_count: 'int',
  group_id: 'text',
  dedup_id: 'text',
  dead_letter_source: 'text',
  deaths: 'text',
  expires_at: 'bigint',
  dead_lettered_at: 'bigint',
};
export const INSERT_COLUMNS = [...MESSAGE_COLUMNS, 'dead_lettered_at'];
const INSERT_TYPES = INSERT_COLUMNS.map((c) => {
  const t = COLUMN_TYPES[c];
  if (!t) throw new Error(`no PostgreSQL type for message column ${c}`);
  return t;
});

export interface MessageInsert {
  queueId: number;
  message: NewMessage;
  deadLetteredAt?: number;
}

/**
 * Columns as arrays, one per column, for `unnest` over parameters $first.. : a batch of
 * any size is one statement with a fixed text, so it is planned once.
 */
export function insertArrays(rows: MessageInsert[]): unknown[][] {
  const cols: unknown[][] = INSERT_COLUMNS.map(() => []);
  for (const r of rows) {
    const values = [...messageValues(r.queueId, r.message), r.deadLetteredAt ?? null];
    for (const [i, v] of values.entries()) cols[i]!.push(v);
  }
  return cols;
}

/** `unnest($first::bigint[], ...) WITH ORDINALITY AS alias(<columns>, ord)` */
export function unnestInsert(first: number, alias: string, extra: { name: string; type: string }[] = []): string {
  const args = [...INSERT_TYPES, ...extra.map((e) => e.type)].map((t, i) => `$${first + i}::${t}[]`).join(', ');
  const names = [...INSERT_COLUMNS, ...extra.map((e) => e.name), 'ord'].join(', ');
  return `unnest(${args}) WITH ORDINALITY AS ${alias}(${names})`;
}

/**
 * Inserts messages, each into its own queue, in one statement; returns the new
 * positions in input order. Positions are drawn in input order; rows are written in
 * FIFO group order, so two transactions touching the same groups lock them in the same
 * order (see the group triggers in migrations/000002.sql) and cannot deadlock each other.
 */
const INSERT_MESSAGES_SQL = `
  WITH input AS MATERIALIZED (SELECT nextval('messages_seq') AS seq, t.* FROM ${unnestInsert(1, 't')}),
  stored AS (
    INSERT INTO messages (seq, ${INSERT_COLUMNS.join(', ')})
    SELECT seq, ${INSERT_COLUMNS.join(', ')} FROM input ORDER BY queue_id, group_id NULLS FIRST, seq
    RETURNING seq
  )
  SELECT seq FROM input ORDER BY ord`;

export async function insertMessages(client: pg.PoolClient | pg.Pool, rows: MessageInsert[]): Promise<number[]> {
  if (rows.length === 0) return [];
  const { rows: out } = await client.query<{ seq: string }>(INSERT_MESSAGES_SQL, insertArrays(rows));
  return out.map((r) => Number(r.seq));
}

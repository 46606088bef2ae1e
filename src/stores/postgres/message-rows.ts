import type pg from 'pg';
import type { StoredMessage } from '../../engine/kernel/types.js';
import { tokenText } from '../receipt-bytes.js';
import { MESSAGE_COLUMNS, READ_COLUMN_NAMES, toMessage, type MessageRow } from '../rows.js';

/**
 * A PostgreSQL message is two rows (migrations/000015.sql), as a SQLite one is:
 * `messages`, what was sent, written once; `deliveries`, where its delivery stands, the
 * only row a claim rewrites. This module names the columns of each and reads the pair.
 */

/** A message read from the pair: the receipt comes as its stored bytes (receipt-bytes.ts). */
export type PgMessageRow = Omit<MessageRow, 'receipt_token'> & { receipt_token: Buffer | string | null };

/** The two rows of a message, as `d` and `m`: `SELECT ${messageColumns()} FROM ${MESSAGE_FROM} WHERE d.queue_id = …`. */
export const MESSAGE_FROM = 'deliveries d JOIN messages m ON m.seq = d.seq';

/**
 * The columns of rows.ts's READ_COLUMN_NAMES that the delivery row holds: the key, and
 * those from sent_at to group_id (the receipt among them); the others are the sent row's.
 */
const DELIVERY_READ = new Set<string>([
  'seq',
  'queue_id',
  ...READ_COLUMN_NAMES.slice(READ_COLUMN_NAMES.indexOf('sent_at'), READ_COLUMN_NAMES.indexOf('group_id') + 1),
]);

/** Every column of a message, under the names of MessageRow, from delivery row `d` and sent row `m`. */
export function messageColumns(d = 'd', m = 'm'): string {
  return READ_COLUMN_NAMES.map((c) =>
    c === 'receipt_token' ? `${d}.receipt AS receipt_token` : `${DELIVERY_READ.has(c) ? d : m}.${c}`,
  ).join(', ');
}

/** As many NULLs as messageColumns lists: a UNION branch that gives no message. */
export function nullColumns(): string {
  return READ_COLUMN_NAMES.map(() => 'NULL').join(', ');
}

/** A row of messageColumns as a message. */
export function pgMessage(r: PgMessageRow): StoredMessage {
  const receipt = r.receipt_token;
  (r as MessageRow).receipt_token = typeof receipt === 'string' ? receipt : tokenText(receipt);
  return toMessage(r as MessageRow);
}

/** The columns of an inserted message (rows.ts's MESSAGE_COLUMNS and dead_lettered_at) that go to its delivery row. */
const DELIVERY_INSERT = ['queue_id', 'sent_at', 'visible_at', 'receive_count', 'group_id'];
const SENT_INSERT = [...MESSAGE_COLUMNS, 'dead_lettered_at'].filter(
  (c) => c === 'queue_id' || !DELIVERY_INSERT.includes(c),
);

/**
 * Two WITH entries (`stored`, returning the positions, and `delivered`) that insert the
 * rows of `input` (a relation with `seq` and the insert columns) for which `where` holds.
 * Delivery rows go in queue and FIFO group order, so two statements touching the same
 * groups lock them in the same order (the group triggers) and cannot deadlock each other.
 */
export function insertRows(input: string, where = 'TRUE'): string {
  return `stored AS (
    INSERT INTO messages (seq, ${SENT_INSERT.join(', ')})
    SELECT seq, ${SENT_INSERT.join(', ')} FROM ${input} i WHERE (${where}) ORDER BY seq
    RETURNING seq
  ),
  delivered AS (
    INSERT INTO deliveries (seq, ${DELIVERY_INSERT.join(', ')})
    SELECT seq, ${DELIVERY_INSERT.join(', ')} FROM ${input} i WHERE (${where})
     ORDER BY queue_id, group_id NULLS FIRST, seq
  )`;
}

/** Deletes messages by their delivery rows; the sent rows go with them (the deliveries_remove trigger). */
export async function deleteMessages(
  c: pg.PoolClient | pg.Pool,
  messages: readonly Pick<StoredMessage, 'queueId' | 'seq'>[],
): Promise<void> {
  await c.query(
    `DELETE FROM deliveries d USING unnest($1::bigint[], $2::bigint[]) AS u(queue_id, seq)
      WHERE d.queue_id = u.queue_id AND d.seq = u.seq`,
    [messages.map((m) => m.queueId), messages.map((m) => m.seq)],
  );
}

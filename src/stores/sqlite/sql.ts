import type Database from 'better-sqlite3';
import type { StoredMessage } from '../../engine/types.js';
import { fromColumns, MESSAGE_COLUMNS, READ_COLUMNS, type Cell } from '../rows.js';

/**
 * A LIMIT taken from a parameter, for SQLite statements. SQLite plans a LIMIT that is a
 * bare parameter with the value bound to it, so every new binding expires the statement
 * and its next run parses and plans it again: 5 to 10 µs a run, which was most of a FIFO
 * receive. The unary plus keeps the value out of the planner; the limit applies the same.
 */
export const BOUND_LIMIT = 'LIMIT +?';

/** The message at a position in a queue (SQLite), read whole with one prepared statement. */
export function messageReader(db: Database.Database): (seq: number, queueId: number) => StoredMessage | undefined {
  const read = db.prepare(`SELECT ${READ_COLUMNS} FROM messages WHERE seq = ? AND queue_id = ?`).raw(true);
  return (seq, queueId) => {
    const row = read.get(seq, queueId) as Cell[] | undefined;
    return row && fromColumns(row);
  };
}

/** `INSERT INTO messages (<MESSAGE_COLUMNS>) VALUES (?, …)`, with `extra` columns after them. */
export function insertMessageSql(extra: string[] = []): string {
  const columns = [...MESSAGE_COLUMNS, ...extra];
  return `INSERT INTO messages (${columns.join(',')}) VALUES (${columns.map(() => '?').join(',')})`;
}

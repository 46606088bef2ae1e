import type Database from 'better-sqlite3';
import type { StoredMessage } from '../../engine/kernel/types.js';
import { fromColumns, MESSAGE_COLUMNS, messageValues, type Cell } from '../rows.js';

/**
 * A SQLite message is two rows (migrations/000015.sql): `messages`, what was sent,
 * written once; `deliveries`, where its delivery stands. This module writes and reads
 * the pair, hands out positions, and stores receipts as short blobs.
 */

/**
 * Every column of a message in the order `fromColumns` reads them (rows.ts), from
 * the two rows: `${MESSAGE_SELECT} WHERE d.queue_id = ? …`.
 */
export const MESSAGE_SELECT = `SELECT d.seq, d.queue_id, m.message_id, m.body, m.attributes, m.system_attributes, m.md5_body,
  m.md5_attributes, m.md5_system, m.sender_id, d.sent_at, d.visible_at, d.receive_count, d.first_received_at,
  d.received_at, d.receipt, d.group_id, m.dedup_id, m.dead_letter_source, m.dead_lettered_at, m.deaths, m.expires_at
  FROM deliveries d JOIN messages m ON m.seq = d.seq`;

/** Where the receipt sits among MESSAGE_SELECT's columns. */
const RECEIPT_COLUMN = 15;

/** A row of MESSAGE_SELECT (read with `raw`) as a message. */
export function sqliteMessage(row: Cell[] | Buffer[]): StoredMessage {
  const cells = row as (Cell | Buffer)[];
  cells[RECEIPT_COLUMN] = tokenText(cells[RECEIPT_COLUMN] as Buffer | null);
  return fromColumns(cells as Cell[]);
}

const SQS_TOKEN = /^[A-Za-z0-9_-]{16}$/;
const SQS_TOKEN_BYTES = 12;

/**
 * A receipt token as stored: an SQS token (16 base64url characters) as its 12 bytes,
 * any other (an AMQP token names its holder: `amqp.<holder>.<token>`) as its UTF-8,
 * with a zero byte added should that be 12 bytes long too.
 */
export function tokenBytes(token: string): Buffer {
  if (SQS_TOKEN.test(token)) return Buffer.from(token, 'base64url');
  const text = Buffer.from(token, 'utf8');
  return text.length === SQS_TOKEN_BYTES ? Buffer.concat([text, Buffer.alloc(1)]) : text;
}

/** The token a stored receipt was made from (tokenBytes), or null. */
export function tokenText(stored: Buffer | null | undefined): string | null {
  if (!stored) return null;
  if (stored.length === SQS_TOKEN_BYTES) return stored.toString('base64url');
  if (stored.length === SQS_TOKEN_BYTES + 1 && stored[SQS_TOKEN_BYTES] === 0)
    return stored.toString('utf8', 0, SQS_TOKEN_BYTES);
  return stored.toString('utf8');
}

/**
 * messageValues gives a message's values in MESSAGE_COLUMNS order, both stores' one
 * mapping; the columns from sent_at to group_id go to the delivery row, the others to the
 * sent one.
 */
const DELIVERY_FROM = MESSAGE_COLUMNS.indexOf('sent_at');
const DELIVERY_TO = MESSAGE_COLUMNS.indexOf('group_id') + 1;
const DELIVERY_COLUMNS = MESSAGE_COLUMNS.slice(DELIVERY_FROM, DELIVERY_TO);
const SENT_COLUMNS = [...MESSAGE_COLUMNS.slice(0, DELIVERY_FROM), ...MESSAGE_COLUMNS.slice(DELIVERY_TO)];
const insertSql = (table: string, columns: readonly string[]) =>
  `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`;

/** Positions are reserved in the database this many at a time. */
const SEQ_BLOCK = 65_536;

/** A message to insert: as sent, or as it arrives in another queue (moved, dead-lettered). */
export type MessageToInsert = Omit<
  StoredMessage,
  'seq' | 'queueId' | 'firstReceivedAt' | 'receivedAt' | 'receiptToken' | 'receiveCount'
> & { receiveCount?: number };

/**
 * Inserts and reads messages as their two rows. Positions come from memory, above the
 * largest ever used: `counters.seq` is a mark no position has reached, moved a block
 * ahead in the transaction of the first position past it. Should that transaction roll
 * back, `resync` reads the mark again, so the next position writes it anew. A restart
 * starts above the mark and above every stored position, so no position is reused (a
 * receipt handle names one).
 */
export class MessageRows {
  private readonly sql;
  private next: number;
  private mark: number;

  constructor(db: Database.Database) {
    this.sql = {
      insertMessage: db.prepare(insertSql('messages', ['seq', ...SENT_COLUMNS, 'dead_lettered_at'])),
      insertDelivery: db.prepare(
        insertSql('deliveries', ['queue_id', 'seq', ...DELIVERY_COLUMNS, 'first_received_at']),
      ),
      read: db.prepare(`${MESSAGE_SELECT} WHERE d.queue_id = ? AND d.seq = ?`).raw(true),
      remove: db.prepare('DELETE FROM deliveries WHERE queue_id = ? AND seq = ?'),
      mark: db.prepare("SELECT value FROM counters WHERE name = 'seq'").pluck(),
      setMark: db.prepare("UPDATE counters SET value = ? WHERE name = 'seq'"),
      maxSeq: db.prepare('SELECT max(seq) FROM messages').pluck(),
    };
    this.mark = this.sql.mark.get() as number;
    this.next = Math.max(this.mark, ((this.sql.maxSeq.get() as number | null) ?? 0) + 1);
  }

  /**
   * Inserts `m` into queue `queueId` at a new position, which it returns. A dead-letter
   * exchange's copy keeps its first receive time, as a message moved to an SQS DLQ does.
   */
  insert(queueId: number, m: MessageToInsert, deadLetteredAt?: number, firstReceivedAt?: number | null): number {
    const seq = this.nextSeq();
    const values = messageValues(queueId, m);
    this.sql.insertMessage.run(
      seq,
      ...values.slice(0, DELIVERY_FROM),
      ...values.slice(DELIVERY_TO),
      deadLetteredAt ?? null,
    );
    this.sql.insertDelivery.run(queueId, seq, ...values.slice(DELIVERY_FROM, DELIVERY_TO), firstReceivedAt ?? null);
    return seq;
  }

  /** The message at `seq` in queue `queueId`, read whole. */
  read(seq: number, queueId: number): StoredMessage | undefined {
    const row = this.sql.read.get(queueId, seq) as Cell[] | undefined;
    return row && sqliteMessage(row);
  }

  /** Deletes the message at `seq` in queue `queueId` (both rows); whether there was one. */
  remove(queueId: number, seq: number): boolean {
    return this.sql.remove.run(queueId, seq).changes > 0;
  }

  /** After a rollback: the mark as the database has it. */
  resync(): void {
    this.mark = this.sql.mark.get() as number;
  }

  private nextSeq(): number {
    const seq = this.next++;
    if (seq >= this.mark) {
      this.mark = seq + SEQ_BLOCK;
      this.sql.setMark.run(this.mark);
    }
    return seq;
  }
}

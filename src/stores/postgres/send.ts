import type pg from 'pg';
import type { DeadLettered, LengthLimit } from '../../engine/store/dead-letters.js';
import type { SendResult } from '../../engine/store/messages.js';
import type { NewMessage, StoredMessage } from '../../engine/kernel/types.js';
import { storedAt } from '../rows.js';
import { BatchedWrites } from './batched-writes.js';
import type { PostgresDeadLetters } from './dead-letters.js';
import { INSERT_COLUMNS, inTransaction, insertArrays, query, unnestInsert } from './sql.js';
import type { PostgresWakeups } from './wakeups.js';

/**
 * The message a FIFO send duplicates: the id's entry in the message's own scope or the
 * other one, unexpired first. `m` names the scope, other scope and id (columns dedup_scope,
 * dedup_other, dedup_id of the send's input), or, with m = 'm', parameters $1 to $4.
 */
const DUPLICATE_OF = (m: 'i' | 'm', now: string) => {
  const [queue, scope, other, id] =
    m === 'i'
      ? ['i.queue_id', 'i.dedup_scope', 'i.dedup_other', 'i.dedup_id']
      : ['$1::bigint', '$2::text', '$3::text', '$4::text'];
  return `SELECT d.message_id, d.seq, d.expires_at FROM fifo_dedup d
     WHERE d.queue_id = ${queue} AND d.scope IN (${scope}, coalesce(${other}, ${scope})) AND d.dedup_id = ${id}
     ORDER BY d.expires_at > ${now} DESC, d.scope = ${scope} DESC LIMIT 1`;
};

/**
 * A send in one statement. FIFO deduplication claims each id in fifo_dedup with
 * INSERT ... ON CONFLICT, which makes concurrent sends of one id from different nodes
 * queue on the key: exactly one stores a message, the others get its id back.
 */
const SEND_EXTRA = [
  { name: 'dedup_scope', type: 'text' },
  { name: 'dedup_other', type: 'text' },
  { name: 'dedup_until', type: 'bigint' },
  { name: 'first_of_id', type: 'bool' },
];
const SEND_NOW = `$${INSERT_COLUMNS.length + SEND_EXTRA.length + 1}`;
const SEND_SQL = `
  WITH input AS MATERIALIZED (
    SELECT nextval('messages_seq') AS seq, t.*
      FROM ${unnestInsert(1, 't', SEND_EXTRA)}
  ),
  won AS (
    INSERT INTO fifo_dedup AS d (queue_id, scope, dedup_id, message_id, seq, expires_at)
    SELECT queue_id, dedup_scope, dedup_id, message_id, seq, coalesce(dedup_until, 0) FROM input i
     WHERE dedup_scope IS NOT NULL AND first_of_id
       -- An id still remembered in the other scope (before a DeduplicationScope change) counts too.
       AND NOT EXISTS (SELECT 1 FROM fifo_dedup x WHERE x.queue_id = i.queue_id AND x.scope = i.dedup_other
                         AND x.dedup_id = i.dedup_id AND x.expires_at > ${SEND_NOW})
     ORDER BY dedup_scope, dedup_id
    ON CONFLICT (queue_id, scope, dedup_id) DO UPDATE
      SET message_id = excluded.message_id, seq = excluded.seq, expires_at = excluded.expires_at
      WHERE d.expires_at <= ${SEND_NOW}
    RETURNING scope, dedup_id
  ),
  stored AS (
    INSERT INTO messages (seq, ${INSERT_COLUMNS.join(', ')})
    SELECT seq, ${INSERT_COLUMNS.join(', ')} FROM input i
     WHERE i.dedup_scope IS NULL
        OR (i.first_of_id AND EXISTS (SELECT 1 FROM won w WHERE w.scope = i.dedup_scope AND w.dedup_id = i.dedup_id))
     ORDER BY group_id NULLS FIRST, seq
    RETURNING seq
  )
  SELECT i.seq, (s.seq IS NOT NULL) AS stored, d.message_id AS dup_message_id, d.seq AS dup_seq
    FROM input i LEFT JOIN stored s ON s.seq = i.seq
    LEFT JOIN LATERAL (${DUPLICATE_OF('i', SEND_NOW)}) d ON s.seq IS NULL
   ORDER BY i.ord`;

/**
 * The send path of the message store (messages.ts delegates to it): sends to a queue with a
 * length limit in one transaction, sends without deduplication grouped (batched-writes.ts),
 * the rest in one statement each.
 */
export class PostgresSend {
  constructor(
    private readonly pool: pg.Pool,
    private readonly deadLetters: PostgresDeadLetters,
    private readonly wakeups: PostgresWakeups,
    private readonly batched: BatchedWrites,
  ) {}

  async send(queueId: number, messages: NewMessage[], limit?: LengthLimit): Promise<SendResult> {
    if (messages.length === 0) return { messages: [], deadLettered: [] };
    if (limit) return this.sendLimited(queueId, messages, limit);
    // Group commit (batched-writes.ts, which wakes the queue); deduplicated sends keep their own statement.
    if (BatchedWrites.batchable(messages))
      return { messages: await this.batched.send(queueId, messages), deadLettered: [] };
    const out = await this.insert(this.pool, queueId, messages);
    if (out.some((m) => !m.duplicate)) this.wakeups.wake(queueId);
    return { messages: out, deadLettered: [] };
  }

  /**
   * A send to a queue with a length limit: one transaction holding the queue's depth
   * lock, deciding message by message as SQLite does (a duplicate takes no room; a
   * message that does not fit pushes out the head or is refused).
   */
  private async sendLimited(queueId: number, messages: NewMessage[], limit: LengthLimit): Promise<SendResult> {
    const out = await inTransaction(this.pool, async (c): Promise<SendResult> => {
      const deadLettered: DeadLettered[] = [];
      await this.deadLetters.lockDepth(c, queueId);
      const result: StoredMessage[] = [];
      for (const m of messages) {
        const base = storedAt(queueId, m, 0);
        const dup =
          m.dedupScope !== undefined &&
          m.dedupId !== undefined &&
          (
            await c.query<{ message_id: string; seq: string }>(
              `SELECT * FROM (${DUPLICATE_OF('m', '$5')}) d WHERE d.expires_at > $5`,
              [queueId, m.dedupScope, m.dedupOtherScope ?? m.dedupScope, m.dedupId, m.sentAt],
            )
          ).rows[0];
        if (dup) result.push({ ...base, messageId: dup.message_id, seq: Number(dup.seq), duplicate: true });
        else if (!(await this.deadLetters.admit(c, queueId, m, limit, deadLettered)))
          result.push({ ...base, rejected: true });
        else result.push(...(await this.insert(c, queueId, [m])));
      }
      return { messages: result, deadLettered };
    });
    this.wakeups.wakeDestinations(out.deadLettered);
    if (out.messages.some((m) => !m.duplicate && !m.rejected)) this.wakeups.wake(queueId);
    return out;
  }

  /** Inserts a batch in one statement (SEND_SQL); duplicates come back marked. */
  private async insert(db: pg.Pool | pg.PoolClient, queueId: number, messages: NewMessage[]): Promise<StoredMessage[]> {
    const firstOfId = new Map<string, number>();
    const first = messages.map((m, i) => {
      if (m.dedupScope === undefined || m.dedupId === undefined) return true;
      const key = `${m.dedupScope}\u0000${m.dedupId}`;
      if (firstOfId.has(key)) return false;
      firstOfId.set(key, i);
      return true;
    });
    const values = [
      ...insertArrays(messages.map((message) => ({ queueId, message }))),
      messages.map((m) => (m.dedupId === undefined ? null : (m.dedupScope ?? null))),
      messages.map((m) => m.dedupOtherScope ?? null),
      messages.map((m) => m.dedupUntil ?? null),
      first,
      messages[0]!.sentAt,
    ];
    type Row = { seq: string; stored: boolean; dup_message_id: string | null; dup_seq: string | null };
    const { rows } = await query<Row>(db, SEND_SQL, values, 'redrive-send');
    const out: StoredMessage[] = [];
    for (const [i, m] of messages.entries()) {
      const r = rows[i]!;
      const base = storedAt(queueId, m, Number(r.seq));
      if (r.stored) {
        out.push(base);
        continue;
      }
      // A duplicate succeeds with the original's id and stores nothing.
      const original = first[i]
        ? await this.original(db, queueId, m, r)
        : out[firstOfId.get(`${m.dedupScope}\u0000${m.dedupId}`)!]!;
      out.push({ ...base, messageId: original.messageId, seq: original.seq, duplicate: true });
    }
    return out;
  }

  /** The message a duplicate stands for: from the statement, or, if a concurrent send committed it meanwhile, read now. */
  private async original(
    db: pg.Pool | pg.PoolClient,
    queueId: number,
    m: NewMessage,
    r: { dup_message_id: string | null; dup_seq: string | null },
  ) {
    if (r.dup_message_id !== null) return { messageId: r.dup_message_id, seq: Number(r.dup_seq) };
    const { rows } = await db.query<{ message_id: string; seq: string }>(DUPLICATE_OF('m', '$5'), [
      queueId,
      m.dedupScope,
      m.dedupOtherScope ?? m.dedupScope,
      m.dedupId,
      m.sentAt,
    ]);
    return rows[0] ? { messageId: rows[0].message_id, seq: Number(rows[0].seq) } : { messageId: m.messageId, seq: 0 };
  }
}

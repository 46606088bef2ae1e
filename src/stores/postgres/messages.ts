import type pg from 'pg';
import type { DeadLettered, LengthLimit } from '../../engine/store/dead-letters.js';
import type {
  DeleteRule,
  MessageStore,
  ReceiptOutcome,
  ReceiptRef,
  ReceiveRequest,
  ReceiveResult,
  SendResult,
  VisibilityChange,
} from '../../engine/store/messages.js';
import { deleteOutcome, visibilityOutcome } from '../../engine/store/receipt-outcome.js';
import { FAIR_GROUPS_SCANNED, noisyRanking, readyWindow } from '../../engine/store/standard-plan.js';
import type { MessageCounts, NewMessage, QueueDepth, StoredMessage } from '../../engine/types.js';
import { toMessage, type MessageRow } from '../rows.js';
import { BatchedWrites } from './batched-writes.js';
import type { PostgresDeadLetters } from './dead-letters.js';
import { countInflight, inflightByGroup, queueDepths, quietDepth } from './depths.js';
import { PostgresFifo } from './fifo.js';
import { INSERT_COLUMNS, inTransaction, insertArrays, NO_LIMIT, query, unnestInsert, type ReceiveRow } from './sql.js';
import { FAIR_RECEIVE_SQL, RECEIVE_SQL } from './standard-receive.js';
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
 * A standard receive in one statement: read a window of the first ready messages
 * (standard-plan.ts), lock the oldest sent of them, skipping any a concurrent receive (on
 * any node) holds, and claim them. Messages received too often are returned unclaimed
 * (poison = true) for the caller to dead-letter.
 */

/** Sending, receiving, deleting and counting messages; FIFO receives through fifo.ts. */
export class PostgresMessages implements MessageStore {
  private readonly fifo: PostgresFifo;
  private readonly batched: BatchedWrites;

  constructor(
    private readonly pool: pg.Pool,
    private readonly deadLetters: PostgresDeadLetters,
    private readonly wakeups: PostgresWakeups,
  ) {
    this.fifo = new PostgresFifo(pool, deadLetters, wakeups);
    this.batched = new BatchedWrites(pool, wakeups);
  }

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
        const base: StoredMessage = {
          ...m,
          queueId,
          receiveCount: m.receiveCount ?? 0,
          firstReceivedAt: null,
          receivedAt: null,
          receiptToken: null,
          seq: 0,
        };
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
      const base: StoredMessage = {
        ...m,
        queueId,
        receiveCount: m.receiveCount ?? 0,
        firstReceivedAt: null,
        receivedAt: null,
        receiptToken: null,
        seq: Number(r.seq),
      };
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

  receive(queueId: number, req: ReceiveRequest): Promise<ReceiveResult> {
    return req.fifo ? this.fifo.receive(queueId, req) : this.receiveStandard(queueId, req);
  }

  /**
   * Claims up to `max` messages; poison ones found on the way are moved to the
   * dead-letter queue (in one transaction per pass) and their places filled.
   */
  private async receiveStandard(queueId: number, req: ReceiveRequest): Promise<ReceiveResult> {
    const messages: StoredMessage[] = [];
    const deadLettered: DeadLettered[] = [];
    const dl = req.deadLetter;
    // A message claimed with a zero timeout is still visible: it must not come twice.
    for (let pass = 0; pass < 10 && messages.length < req.max; pass++) {
      const room = req.max - messages.length;
      const tokens = Array.from({ length: room }, () => req.newToken());
      const params = [
        queueId,
        req.now,
        req.retentionCutoff,
        room,
        dl?.maxReceiveCount ?? NO_LIMIT,
        req.now + req.visibilityTimeoutMs,
        tokens,
        messages.map((m) => m.seq),
        readyWindow(room),
      ];
      const { rows } = req.noisy?.size
        ? await query<ReceiveRow>(
            this.pool,
            FAIR_RECEIVE_SQL,
            [...params, noisyRanking(req.noisy), FAIR_GROUPS_SCANNED],
            'redrive-receive-fair',
          )
        : await query<ReceiveRow>(this.pool, RECEIVE_SQL, params, 'redrive-receive');
      const poison = rows.filter((r) => r.poison === true).map(toMessage);
      messages.push(...rows.filter((r) => r.poison === false).map(toMessage));
      const short = rows.find((r) => r.poison === null);
      if (short && poison.length === 0 && deadLettered.length === 0) {
        return {
          messages,
          deadLettered,
          nextVisibleAt: short.next_visible == null ? null : Number(short.next_visible),
        };
      }
      if (!dl || poison.length === 0) break;
      // Each poison message is locked and checked again (another node may have moved or
      // claimed it since), then moved, in one transaction.
      const moved = await inTransaction(this.pool, async (c) => {
        const { rows: locked } = await c.query<MessageRow>(
          `SELECT * FROM messages WHERE seq = ANY($1::bigint[]) AND queue_id = $2 AND visible_at <= $3 AND receive_count >= $4
            ORDER BY seq FOR UPDATE SKIP LOCKED`,
          [poison.map((m) => m.seq), queueId, req.now, dl.maxReceiveCount],
        );
        const out: DeadLettered[] = [];
        await this.deadLetters.move(c, locked.map(toMessage), dl, req.now, out);
        return out;
      });
      deadLettered.push(...moved);
      this.wakeups.wakeDestinations(moved);
    }
    return { messages, deadLettered };
  }

  async delete(queueId: number, receipts: ReceiptRef[], rule: DeleteRule): Promise<ReceiptOutcome[]> {
    if (receipts.length === 0) return [];
    const seqs = receipts.map((r) => r.seq);
    let released = false;
    let outcomes: ReceiptOutcome[];
    if (!rule.requireCurrent) {
      // Any receipt deletes: grouped with the other deletes of this turn (batched-writes.ts).
      const found = await this.batched.delete(queueId, seqs, rule.now);
      released = [...found.values()].some((r) => r.groupId !== null);
      outcomes = receipts.map((ref) => {
        const row = found.get(ref.seq);
        found.delete(ref.seq); // a second receipt of one message finds it gone
        return deleteOutcome(row, ref, rule);
      });
    } else {
      outcomes = await inTransaction(this.pool, async (c) => {
        const rows = await lockReceipts(c, queueId, seqs);
        const ok: number[] = [];
        const out = receipts.map((ref) => {
          const outcome = deleteOutcome(rows.get(ref.seq), ref, rule);
          if (outcome === 'ok') {
            ok.push(ref.seq);
            if (rows.get(ref.seq)!.groupId !== null) released = true;
            rows.delete(ref.seq);
          }
          return outcome;
        });
        if (ok.length) {
          await c.query('DELETE FROM messages WHERE seq = ANY($1::bigint[])', [ok]);
        }
        return out;
      });
    }
    // Deleting a FIFO message may release its group to the next receiver.
    if (released) this.wakeups.wake(queueId);
    return outcomes;
  }

  async changeVisibility(queueId: number, changes: VisibilityChange[], now: number): Promise<ReceiptOutcome[]> {
    if (changes.length === 0) return [];
    let wake = false;
    const outcomes = await inTransaction(this.pool, async (c) => {
      const rows = await lockReceipts(
        c,
        queueId,
        changes.map((ch) => ch.seq),
      );
      const updates = new Map<number, number>();
      const out = changes.map((ch) => {
        const row = rows.get(ch.seq);
        const { outcome, visibleAt } = visibilityOutcome(row, ch, now);
        if (outcome === 'ok') {
          row!.visibleAt = visibleAt!;
          updates.set(ch.seq, visibleAt!);
        }
        return outcome;
      });
      if (updates.size) {
        await c.query(
          'UPDATE messages m SET visible_at = u.v FROM unnest($1::bigint[], $2::bigint[]) AS u(seq, v) WHERE m.seq = u.seq',
          [[...updates.keys()], [...updates.values()]],
        );
        wake = [...updates.values()].some((v) => v <= now);
      }
      return out;
    });
    if (wake) this.wakeups.wake(queueId);
    return outcomes;
  }

  async count(queueId: number, now: number): Promise<MessageCounts> {
    const { visible, inflight, delayed } = (await this.depths([queueId], now)).get(queueId) ?? {
      visible: 0,
      inflight: 0,
      delayed: 0,
    };
    return { visible, inflight, delayed };
  }

  depths(queueIds: readonly number[], now: number): Promise<Map<number, QueueDepth>> {
    return queueDepths(this.pool, queueIds, now);
  }

  countInflight(queueId: number, now: number): Promise<number> {
    return countInflight(this.pool, queueId, now);
  }

  inflightByGroup(queueId: number, now: number) {
    return inflightByGroup(this.pool, queueId, now);
  }

  quietDepth(queueId: number, noisy: readonly string[], now: number) {
    return quietDepth(this.pool, queueId, noisy, now);
  }

  async nextVisibleAt(queueId: number, now: number): Promise<number | undefined> {
    const { rows } = await this.pool.query<{ t: string | null }>(
      'SELECT min(visible_at) AS t FROM messages WHERE queue_id = $1 AND visible_at > $2',
      [queueId, now],
    );
    return rows[0]!.t === null ? undefined : Number(rows[0]!.t);
  }

  /**
   * Dead-lettered messages are found through a partial index by id (migrations/000006.sql);
   * only ids not found there are looked for among the queue's other messages.
   */
  async deleteByIds(queueId: number, messageIds: readonly string[], _now: number): Promise<string[]> {
    const deleteSql = (dead: string) =>
      `DELETE FROM messages WHERE queue_id = $1 AND message_id = ANY($2::text[]) ${dead} RETURNING message_id`;
    const dead = await this.pool.query<{ message_id: string }>(deleteSql('AND dead_letter_source IS NOT NULL'), [
      queueId,
      messageIds,
    ]);
    const deleted = new Set(dead.rows.map((r) => r.message_id));
    const rest = messageIds.filter((id) => !deleted.has(id));
    if (rest.length)
      for (const r of (await this.pool.query<{ message_id: string }>(deleteSql(''), [queueId, rest])).rows)
        deleted.add(r.message_id);
    // Deleting a FIFO message held by a receive may release its group to a waiting receive.
    if (deleted.size) this.wakeups.wake(queueId);
    return messageIds.filter((id) => deleted.has(id));
  }

  async peek(queueId: number, afterSeq: number, limit: number): Promise<StoredMessage[]> {
    const { rows } = await this.pool.query<MessageRow>(
      'SELECT * FROM messages WHERE queue_id = $1 AND seq > $2 ORDER BY seq LIMIT $3',
      [queueId, afterSeq, limit],
    );
    return rows.map(toMessage);
  }
}

interface ReceiptState {
  receiptToken: string | null;
  visibleAt: number;
  receivedAt: number | null;
  groupId: string | null;
}

/** Locks the named messages of a queue for the rest of the transaction. */
async function lockReceipts(c: pg.PoolClient, queueId: number, seqs: number[]): Promise<Map<number, ReceiptState>> {
  const { rows } = await c.query<{
    seq: string;
    receipt_token: string | null;
    visible_at: string;
    received_at: string | null;
    group_id: string | null;
  }>(
    'SELECT seq, receipt_token, visible_at, received_at, group_id FROM messages WHERE queue_id = $1 AND seq = ANY($2::bigint[]) ORDER BY seq FOR UPDATE',
    [queueId, seqs],
  );
  return new Map(
    rows.map((r) => [
      Number(r.seq),
      {
        receiptToken: r.receipt_token,
        visibleAt: Number(r.visible_at),
        receivedAt: r.received_at === null ? null : Number(r.received_at),
        groupId: r.group_id,
      },
    ]),
  );
}

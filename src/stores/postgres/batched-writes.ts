import type pg from 'pg';
import type { NewMessage, StoredMessage } from '../../engine/kernel/types.js';
import { storedAt } from '../rows.js';
import { GroupCommit } from './group-commit.js';
import { INSERT_COLUMNS, insertArrays, query, unnestInsert } from './sql.js';
import { addReady, readyCount } from '../wakeup-listeners.js';
import { AVAILABLE_CHANNEL, type PostgresWakeups, type SentCount } from './wakeups.js';

/**
 * The writes every message takes, grouped (group-commit.ts): the sends of one turn to
 * queues without deduplication or length limit in one INSERT, and the deletes of one
 * turn on standard queues in one DELETE, each with its counters added once per queue.
 * Several queues share a statement; rows and counters are written in queue order, so two
 * batches lock shared rows in the same order.
 */
const PAYLOAD = `$${INSERT_COLUMNS.length + 1}::text`;
/**
 * The sends also NOTIFY the other nodes (wakeups.ts) in the same statement, when there are
 * any: the notification is delivered at the commit, when the messages become visible,
 * with no round trip of its own. A NOTIFY makes the commit take PostgreSQL's notify lock
 * across its WAL flush, which serialises such commits; with at most two send batches in
 * flight per node that costs little, while a NOTIFY per request would serialise them all.
 */
const SEND_SQL = `
  WITH input AS MATERIALIZED (SELECT nextval('messages_seq') AS seq, t.* FROM ${unnestInsert(1, 't')}),
  stored AS (
    INSERT INTO messages (seq, ${INSERT_COLUMNS.join(', ')})
    SELECT seq, ${INSERT_COLUMNS.join(', ')} FROM input ORDER BY queue_id, seq
  ),
  notified AS (SELECT pg_notify('${AVAILABLE_CHANNEL}', ${PAYLOAD}) WHERE ${PAYLOAD} IS NOT NULL)
  -- Reading notified once (an InitPlan) is what runs it: a SELECT in WITH runs only if read.
  SELECT seq FROM input WHERE (SELECT count(*) FROM notified) IS NOT NULL ORDER BY ord`;

const DELETE_SQL = `
  WITH gone AS (
    DELETE FROM messages m USING unnest($1::bigint[], $2::bigint[]) AS d(queue_id, seq)
     WHERE m.seq = d.seq AND m.queue_id = d.queue_id
    RETURNING m.queue_id, m.seq, m.receipt_token, m.visible_at, m.group_id
  )
  SELECT * FROM gone`;

interface Send {
  queueId: number;
  messages: NewMessage[];
}

interface Delete {
  queueId: number;
  seqs: number[];
  now: number;
}

/** What a delete found of a message: its receipt state before it went. */
export interface Gone {
  receiptToken: string | null;
  visibleAt: number;
  groupId: string | null;
}

export class BatchedWrites {
  private readonly sends: GroupCommit<Send, StoredMessage[]>;
  private readonly deletes: GroupCommit<Delete, Map<number, Gone>>;

  constructor(pool: pg.Pool, wakeups: PostgresWakeups) {
    this.sends = new GroupCommit(async (items) => {
      const sent = sentCounts(items);
      const out = await sendAll(pool, items, wakeups.payload(sent));
      // One wake-up per queue per batch, not one per request, saying how many messages it
      // wrote: the engine rouses as many waiting receives as take them (long-poll.ts). A
      // wake-up per request would rouse ten receives for ten sends, and the first would
      // take all ten while nine found nothing.
      for (const [queueId, { ready }] of sent) wakeups.wakeLocal(queueId, ready);
      return out;
    });
    this.deletes = new GroupCommit((items) => deleteAll(pool, items));
  }

  /** Whether a send can join a batch: no message of it is deduplicated (FIFO keeps its own statement). */
  static batchable(messages: readonly NewMessage[]): boolean {
    return messages.every((m) => m.dedupId === undefined || m.dedupScope === undefined);
  }

  send(queueId: number, messages: NewMessage[]): Promise<StoredMessage[]> {
    return this.sends.submit({ queueId, messages });
  }

  /** Deletes the messages at `seqs` of a queue; returns those that were there. */
  delete(queueId: number, seqs: number[], now: number): Promise<Map<number, Gone>> {
    return this.deletes.submit({ queueId, seqs, now });
  }
}

/** Per queue, how many messages a batch sends, and how many a receive can take now (see readyCount). */
function sentCounts(items: readonly Send[]): Map<number, SentCount> {
  const out = new Map<number, SentCount>();
  for (const { queueId, messages } of items) {
    const before = out.get(queueId) ?? { total: 0, ready: 0 };
    out.set(queueId, { total: before.total + messages.length, ready: addReady(before.ready, readyCount(messages)) });
  }
  return out;
}

async function sendAll(pool: pg.Pool, items: Send[], payload: string | null): Promise<StoredMessage[][]> {
  const rows = items.flatMap(({ queueId, messages }) => messages.map((message) => ({ queueId, message })));
  const { rows: seqs } = await query<{ seq: string }>(
    pool,
    SEND_SQL,
    [...insertArrays(rows), payload],
    'redrive-send-batch',
  );
  let i = 0;
  return items.map(({ queueId, messages }) => messages.map((m) => storedAt(queueId, m, Number(seqs[i++]!.seq))));
}

async function deleteAll(pool: pg.Pool, items: Delete[]): Promise<Map<number, Gone>[]> {
  // In position order, so two batches deleting the same messages lock them in the same order.
  const pairs = items
    .flatMap(({ queueId, seqs }) => seqs.map((seq) => [queueId, seq] as const))
    .sort((a, b) => a[1] - b[1]);
  type Row = {
    queue_id: string;
    seq: string;
    receipt_token: string | null;
    visible_at: string;
    group_id: string | null;
  };
  const { rows } = await query<Row>(
    pool,
    DELETE_SQL,
    [pairs.map((p) => p[0]), pairs.map((p) => p[1])],
    'redrive-delete-batch',
  );
  const found = new Map(
    rows.map((r) => [
      `${r.queue_id}:${r.seq}`,
      { receiptToken: r.receipt_token, visibleAt: Number(r.visible_at), groupId: r.group_id },
    ]),
  );
  // Each message goes to the first request that named it; a later one finds it gone.
  return items.map(({ queueId, seqs }) => {
    const out = new Map<number, Gone>();
    for (const seq of seqs) {
      const key = `${queueId}:${seq}`;
      const row = found.get(key);
      if (row) out.set(seq, row);
      found.delete(key);
    }
    return out;
  });
}

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
import type { MessageCounts, NewMessage, QueueDepth, StoredMessage } from '../../engine/kernel/types.js';
import { toMessage, type MessageRow } from '../rows.js';
import { BatchedWrites } from './batched-writes.js';
import type { PostgresDeadLetters } from './dead-letters.js';
import { countInflight, inflightByGroup, queueDepths, quietDepth } from './depths.js';
import { PostgresFifo } from './fifo.js';
import { PostgresSend } from './send.js';
import { inTransaction, NO_LIMIT, query, type ReceiveRow } from './sql.js';
import { FAIR_RECEIVE_SQL, RECEIVE_SQL } from './standard-receive.js';
import type { PostgresWakeups } from './wakeups.js';

/** Sending, receiving, deleting and counting messages; FIFO receives through fifo.ts. */
export class PostgresMessages implements MessageStore {
  private readonly fifo: PostgresFifo;
  private readonly batched: BatchedWrites;
  private readonly sender: PostgresSend;

  constructor(
    private readonly pool: pg.Pool,
    private readonly deadLetters: PostgresDeadLetters,
    private readonly wakeups: PostgresWakeups,
  ) {
    this.fifo = new PostgresFifo(pool, deadLetters, wakeups);
    this.batched = new BatchedWrites(pool, wakeups);
    this.sender = new PostgresSend(pool, deadLetters, wakeups, this.batched);
  }

  /** Sends through send.ts: length-limited, grouped or deduplicated. */
  send(queueId: number, messages: NewMessage[], limit?: LengthLimit): Promise<SendResult> {
    return this.sender.send(queueId, messages, limit);
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

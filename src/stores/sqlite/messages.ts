import type Database from 'better-sqlite3';
import { overReceiveLimit, type DeadLettered, type LengthLimit } from '../../engine/store/dead-letters.js';
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
import { FAIR_GROUPS_SCANNED, readyWindow, takeOrder, type ReadyRow } from '../../engine/store/standard-plan.js';
import type { NewMessage, QueueDepth, StoredMessage } from '../../engine/kernel/types.js';
import type { Cell } from '../rows.js';
import { readyCount } from '../wakeup-listeners.js';
import type { SqliteDeadLetters } from './dead-letters.js';
import { SqliteFifo } from './fifo.js';
import type { GroupCommit } from './group-commit.js';
import { MESSAGE_SELECT, sqliteMessage, tokenBytes, tokenText, type MessageRows } from './message-rows.js';
import { BOUND_LIMIT } from './sql.js';
import type { SqliteWakeups } from './wakeups.js';

/** Sending, receiving, deleting and counting messages; FIFO queues through fifo.ts. */
export class SqliteMessages implements MessageStore {
  private readonly sql;
  private readonly fifo: SqliteFifo;

  constructor(
    db: Database.Database,
    private readonly commit: GroupCommit,
    private readonly wakeups: SqliteWakeups,
    private readonly deadLetters: SqliteDeadLetters,
    private readonly rows: MessageRows,
  ) {
    this.sql = {
      // The window of the first ready messages (standard-plan.ts), from deliveries_ready
      // alone (it covers seq), oldest sent first; only the rows a receive may take are read
      // from the table: the IN list is walked in position order and the LIMIT stops it.
      // Rows past retention are returned (sent_at) for the caller to see, not skipped: they
      // would shift the window, so a window that holds one is read again by `ready`.
      readyFirst: db
        .prepare(
          `SELECT seq, receive_count, group_id, sent_at FROM deliveries
          WHERE queue_id = ? AND seq IN (SELECT seq FROM deliveries WHERE queue_id = ? AND visible_at <= ?
                                         ORDER BY visible_at, seq ${BOUND_LIMIT})
          ORDER BY seq ${BOUND_LIMIT}`,
        )
        .raw(true),
      // Only what deciding needs: the claim reads the chosen messages whole.
      ready: db
        .prepare(
          `SELECT seq, receive_count, group_id FROM deliveries WHERE queue_id = ? AND visible_at <= ? AND sent_at >= ?
         ORDER BY visible_at, seq ${BOUND_LIMIT}`,
        )
        .raw(true),
      // Fair queues: the first ready messages of each group that is not noisy, found by
      // walking the queue's groups on deliveries_group (one seek a group) rather than the
      // ready index, where they may sit behind a noisy group's whole backlog.
      quietReady: db
        .prepare(
          `WITH RECURSIVE g(id, n) AS (
           SELECT (SELECT group_id FROM deliveries WHERE queue_id = @q AND group_id IS NOT NULL ORDER BY group_id LIMIT 1), 1
           UNION ALL
           SELECT (SELECT group_id FROM deliveries WHERE queue_id = @q AND group_id IS NOT NULL AND group_id > g.id ORDER BY group_id LIMIT 1), n + 1
             FROM g WHERE g.id IS NOT NULL AND n < @groups)
         SELECT m.seq, m.receive_count, m.group_id FROM g JOIN deliveries m ON m.queue_id = @q AND m.seq IN (
             -- (The unary + keeps the planner on deliveries_group: by visibility it would read the whole queue for each group.)
             SELECT seq FROM deliveries WHERE queue_id = @q AND group_id = g.id AND +visible_at <= @now AND +sent_at >= @cutoff
              ORDER BY seq LIMIT @max)
          WHERE g.id IS NOT NULL AND g.id NOT IN (SELECT value FROM json_each(@noisy))
          ORDER BY m.seq LIMIT @window`,
        )
        .raw(true),
      inflightByGroup: db
        .prepare(
          `SELECT group_id, count(*) FROM deliveries WHERE queue_id = ? AND visible_at > ? AND receive_count > 0 GROUP BY group_id`,
        )
        .raw(true),
      quietDepth: db.prepare(
        `SELECT coalesce(sum(visible_at <= @now), 0) AS visible, coalesce(sum(visible_at > @now AND receive_count > 0), 0) AS inflight,
                coalesce(sum(visible_at > @now AND receive_count = 0), 0) AS delayed, min(sent_at) AS oldest
           FROM deliveries WHERE queue_id = @q AND (group_id IS NULL OR group_id NOT IN (SELECT value FROM json_each(@noisy)))`,
      ),
      // One statement claims a whole receive (the positions come as a JSON array) and
      // rewrites only the delivery rows; a second reads the messages whole.
      claim: db.prepare(
        `UPDATE deliveries SET visible_at = ?, receive_count = receive_count + 1,
           first_received_at = COALESCE(first_received_at, ?), received_at = ?, receipt = ?
         WHERE queue_id = ? AND seq IN (SELECT value FROM json_each(?))`,
      ),
      claimed: db
        .prepare(`${MESSAGE_SELECT} WHERE d.queue_id = ? AND d.seq IN (SELECT value FROM json_each(?))`)
        .raw(true),
      receiptRow: db.prepare('SELECT receipt, visible_at, received_at FROM deliveries WHERE queue_id = ? AND seq = ?'),
      deleteHeld: db.prepare(
        'DELETE FROM deliveries WHERE queue_id = ? AND seq = ? AND receipt = ? AND visible_at > ?',
      ),
      setVisibleAt: db.prepare('UPDATE deliveries SET visible_at = ? WHERE queue_id = ? AND seq = ?'),
      // Many queues in one statement (a statement a queue cost 4 native calls each, most
      // of a 10,000-queue scrape). An empty queue skips its subqueries (CASE is lazy). The
      // hidden and in-flight counts share one scan of the hidden range, as 'hidden,inflight'.
      // A queue with a length limit has a maintained depth; the others are counted over
      // their index range. A depth row for every queue would cost each send a row update
      // (measured: sends 15-25% slower in the store), to spare a count that costs about
      // 40 ms per million messages when metrics or the console ask. The totals are
      // materialised so that each queue is counted once, not once per CASE.
      depths: db
        .prepare(
          `WITH t AS MATERIALIZED (
           SELECT q.id AS id, coalesce((SELECT messages FROM queue_depth WHERE queue_id = q.id),
                                       (SELECT count(*) FROM deliveries WHERE queue_id = q.id)) AS total
             FROM queues q WHERE q.id IN (SELECT value FROM json_each(@ids)))
         SELECT id, total,
           CASE WHEN total = 0 THEN NULL ELSE (SELECT count(*) || ',' || coalesce(sum(receive_count > 0), 0)
             FROM deliveries d WHERE d.queue_id = t.id AND d.visible_at > @now) END AS hidden,
           -- sent_at never decreases along a queue's positions: the first is the oldest.
           CASE WHEN total = 0 THEN NULL ELSE (SELECT sent_at FROM deliveries d WHERE d.queue_id = t.id ORDER BY seq LIMIT 1) END AS oldest,
           CASE WHEN total = 0 THEN 0 ELSE (SELECT count(DISTINCT group_id) FROM deliveries d
             WHERE d.queue_id = t.id AND group_id IS NOT NULL AND receipt IS NOT NULL AND visible_at > @now) END AS groups
         FROM t`,
        )
        .raw(true),
      nextVisible: db.prepare('SELECT min(visible_at) AS t FROM deliveries WHERE queue_id = ? AND visible_at > ?'),
      // Dead-lettered messages are found by id through a partial index (messages_dead_letter_id);
      // any other message by reading the queue, as no index of every message id is kept.
      deleteDeadById: db.prepare(
        `DELETE FROM deliveries WHERE queue_id = ? AND seq IN
           (SELECT seq FROM messages WHERE queue_id = ? AND message_id = ? AND dead_letter_source IS NOT NULL)`,
      ),
      deleteById: db.prepare(
        `DELETE FROM deliveries WHERE queue_id = ? AND seq IN
           (SELECT d.seq FROM deliveries d JOIN messages m ON m.seq = d.seq WHERE d.queue_id = ? AND m.message_id = ?)`,
      ),
      peek: db.prepare(`${MESSAGE_SELECT} WHERE d.queue_id = ? AND d.seq > ? ORDER BY d.seq ${BOUND_LIMIT}`).raw(true),
    };
    this.fifo = new SqliteFifo(db, deadLetters, (queueId, seqs, req) => this.claim(queueId, seqs, req), rows);
  }

  send(queueId: number, messages: NewMessage[], limit?: LengthLimit): Promise<SendResult> {
    return this.commit.run(() => {
      let stored = 0;
      const out: StoredMessage[] = [];
      const deadLettered: DeadLettered[] = [];
      for (const m of messages) {
        const s = m as StoredMessage;
        // The message becomes the stored record in place: this is the hottest loop of a send.
        s.queueId = queueId;
        s.receiveCount = m.receiveCount ?? 0;
        s.firstReceivedAt = null;
        s.receivedAt = null;
        s.receiptToken = null;
        // A FIFO duplicate succeeds with the original's id and stores nothing. (The rare
        // outcomes get their own objects, so a retried batch starts from the message as given.)
        const dup = this.fifo.duplicateOf(queueId, m, m.sentAt);
        if (dup) {
          out.push({ ...s, messageId: dup.messageId, seq: dup.seq, duplicate: true });
          continue;
        }
        if (limit && !this.deadLetters.admit(queueId, m, limit, deadLettered)) {
          out.push({ ...s, seq: 0, rejected: true });
          continue;
        }
        out.push(s);
        s.seq = this.rows.insert(queueId, m);
        this.fifo.remember(queueId, m, s.seq);
        stored++;
      }
      if (stored)
        this.wakeups.wakeAfterCommit(
          queueId,
          readyCount(stored === messages.length ? messages : out.filter((m) => !m.duplicate && !m.rejected)),
        );
      return { messages: out, deadLettered };
    });
  }

  receive(queueId: number, req: ReceiveRequest): Promise<ReceiveResult> {
    return this.commit.run(() => {
      return req.fifo ? this.fifo.receive(queueId, req) : this.receiveStandard(queueId, req);
    });
  }

  private receiveStandard(queueId: number, req: ReceiveRequest): ReceiveResult {
    const chosen: number[] = [];
    const deadLettered: DeadLettered[] = [];
    // Dead-lettered rows leave the range, so another pass fills the places they freed;
    // the rows already chosen are still in range until the claim and are skipped.
    for (let pass = 0, refill = true; pass < 10 && refill && chosen.length < req.max; pass++) {
      // Oldest sent first among the next ready messages, quiet groups first (standard-plan.ts).
      const rows = takeOrder(this.readyRows(queueId, req, chosen.length), req.noisy);
      refill = false;
      for (const { seq, receiveCount } of rows) {
        if (chosen.length >= req.max) break;
        if (chosen.includes(seq)) continue;
        if (overReceiveLimit(req.deadLetter, receiveCount)) {
          refill = true;
          this.deadLetters.move(this.rows.read(seq, queueId)!, req.deadLetter, req.now, deadLettered);
          continue;
        }
        chosen.push(seq);
      }
    }
    const messages = this.claim(queueId, chosen, req);
    if (messages.length === req.max || deadLettered.length > 0) return { messages, deadLettered };
    // Fewer than asked: read here, in the receive's transaction, so that a long poll need not ask.
    return { messages, deadLettered, nextVisibleAt: this.nextVisible(queueId, req.now) ?? null };
  }

  private readyRows(queueId: number, req: ReceiveRequest, taken: number): ReadyRow[] {
    const toRow = ([seq, receiveCount, groupId]: readonly [number, number, string | null, ...unknown[]]): ReadyRow => ({
      seq,
      receiveCount,
      groupId,
    });
    const noisy = req.noisy;
    if (!noisy?.size) {
      // Without noisy groups the receive takes the window's lowest positions: only those
      // rows are read, unless the window holds a message past retention.
      const first = this.sql.readyFirst.all(queueId, queueId, req.now, readyWindow(req.max), req.max + taken) as [
        number,
        number,
        string | null,
        number,
      ][];
      if (first.every((r) => r[3] >= req.retentionCutoff)) return first.map(toRow);
    }
    const window = (
      this.sql.ready.all(queueId, req.now, req.retentionCutoff, readyWindow(req.max)) as [
        number,
        number,
        string | null,
      ][]
    ).map(toRow);
    // Only a fair receive whose window lacks quiet messages looks further.
    if (!noisy?.size || window.filter((r) => r.groupId === null || !noisy.has(r.groupId)).length >= req.max + taken)
      return window;
    const quiet = this.sql.quietReady.all({
      q: queueId,
      now: req.now,
      cutoff: req.retentionCutoff,
      max: req.max,
      window: readyWindow(req.max),
      groups: FAIR_GROUPS_SCANNED,
      noisy: JSON.stringify([...noisy.keys()]),
    }) as [number, number, string | null][];
    return [...window, ...quiet.map(toRow)];
  }

  /**
   * Gives the messages at `seqs` a new receipt, in one statement: hidden for the
   * visibility timeout, counted as received. They share one token (a handle names the
   * position too, so each stays unique). Returned in the order of `seqs`.
   */
  private claim(queueId: number, seqs: number[], req: ReceiveRequest): StoredMessage[] {
    if (seqs.length === 0) return [];
    const positions = JSON.stringify(seqs);
    this.sql.claim.run(
      req.now + req.visibilityTimeoutMs,
      req.now,
      req.now,
      tokenBytes(req.newToken()),
      queueId,
      positions,
    );
    const messages = (this.sql.claimed.all(queueId, positions) as Cell[][]).map(sqliteMessage);
    return messages.sort((a, b) => seqs.indexOf(a.seq) - seqs.indexOf(b.seq));
  }

  delete(queueId: number, receipts: ReceiptRef[], rule: DeleteRule): Promise<ReceiptOutcome[]> {
    return this.commit.run(() => {
      const outcomes = receipts.map((r) => {
        // One statement deletes in the common case: with any receipt on a standard queue,
        // with the current one on a FIFO queue (deleteOutcome's rule). Only a receipt
        // that deleted nothing needs the row read, to say why.
        const deleted = rule.requireCurrent
          ? this.sql.deleteHeld.run(queueId, r.seq, tokenBytes(r.token), rule.now).changes > 0
          : this.rows.remove(queueId, r.seq);
        return deleted ? 'ok' : deleteOutcome(this.receiptRow(r.seq, queueId), r, rule);
      });
      // A FIFO delete releases its group: wake a waiter if that left a message to hand out.
      if (rule.requireCurrent && outcomes.includes('ok') && this.fifo.anyAvailable(queueId, rule.now))
        this.wakeups.wakeAfterCommit(queueId);
      return outcomes;
    });
  }

  deleteByIds(queueId: number, messageIds: readonly string[], _now: number): Promise<string[]> {
    return this.commit.run(() => {
      const deleted = messageIds.filter(
        (id) =>
          this.sql.deleteDeadById.run(queueId, queueId, id).changes > 0 ||
          this.sql.deleteById.run(queueId, queueId, id).changes > 0,
      );
      // Deleting a FIFO message held by a receive may release its group to a waiting receive.
      if (deleted.length) this.wakeups.wakeAfterCommit(queueId);
      return deleted;
    });
  }

  changeVisibility(queueId: number, changes: VisibilityChange[], now: number): Promise<ReceiptOutcome[]> {
    return this.commit.run(() =>
      changes.map((c) => {
        const { outcome, visibleAt } = visibilityOutcome(this.receiptRow(c.seq, queueId), c, now);
        if (outcome === 'ok') {
          this.sql.setVisibleAt.run(visibleAt, queueId, c.seq);
          if (visibleAt! <= now) this.wakeups.wakeAfterCommit(queueId);
        }
        return outcome;
      }),
    );
  }

  private receiptRow(seq: number, queueId: number) {
    const r = this.sql.receiptRow.get(queueId, seq) as
      | { receipt: Buffer | null; visible_at: number; received_at: number | null }
      | undefined;
    return r && { receiptToken: tokenText(r.receipt), visibleAt: r.visible_at, receivedAt: r.received_at };
  }

  async depths(queueIds: readonly number[], now: number): Promise<Map<number, QueueDepth>> {
    const out = new Map<number, QueueDepth>();
    const rows = this.sql.depths.all({ now, ids: JSON.stringify(queueIds) }) as [
      number,
      number,
      string | null,
      number | null,
      number,
    ][];
    for (const [id, total, counts, oldest, groupsInflight] of rows) {
      const [hidden, inflight] = counts === null ? [0, 0] : (counts.split(',').map(Number) as [number, number]);
      out.set(id, {
        visible: total - hidden,
        inflight,
        delayed: hidden - inflight,
        groupsInflight,
        ...(oldest !== null && { oldestSentAt: oldest }),
      });
    }
    return out;
  }

  async inflightByGroup(queueId: number, now: number) {
    const groups = new Map<string, number>();
    let total = 0;
    for (const [group, n] of this.sql.inflightByGroup.all(queueId, now) as [string | null, number][]) {
      total += n;
      if (group !== null) groups.set(group, n);
    }
    return { total, groups };
  }

  async quietDepth(queueId: number, noisy: readonly string[], now: number) {
    const r = this.sql.quietDepth.get({ q: queueId, now, noisy: JSON.stringify(noisy) }) as {
      visible: number;
      inflight: number;
      delayed: number;
      oldest: number | null;
    };
    return {
      visible: r.visible,
      inflight: r.inflight,
      delayed: r.delayed,
      ...(r.oldest !== null && { oldestSentAt: r.oldest }),
    };
  }

  async nextVisibleAt(queueId: number, now: number): Promise<number | undefined> {
    return this.nextVisible(queueId, now);
  }

  private nextVisible(queueId: number, now: number): number | undefined {
    return (this.sql.nextVisible.get(queueId, now) as { t: number | null }).t ?? undefined;
  }

  async peek(queueId: number, afterSeq: number, limit: number): Promise<StoredMessage[]> {
    return (this.sql.peek.all(queueId, afterSeq, limit) as Cell[][]).map(sqliteMessage);
  }
}

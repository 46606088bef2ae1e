import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { MessageCounts, NewMessage, QueueRecord, StoredMessage } from '../../engine/types.js';
import { deleteOutcome, visibilityOutcome } from '../receipt-outcome.js';
import type {
  DeadLetterTarget, DeleteRule, LengthLimit, MoveBatch, MoveBatchResult, MoveTaskRecord, NewMoveTask, QueuePatch, QueueStats, ReceiptOutcome,
  ReceiptRef, ReceiveRequest, ReceiveResult, Store, VisibilityChange,
} from '../store.js';
import { SqliteDeadLetterOps } from './dead-letter-ops.js';
import { SqliteDeathOps } from './death-ops.js';
import { SqliteFifoOps } from './fifo-ops.js';
import { Checkpointer, FALLBACK_CHECKPOINT_PAGES } from './checkpointer.js';
import { GroupCommit } from './group-commit.js';
import { migrations } from './migrations.js';
import { BOUND_LIMIT, fromColumns, MESSAGE_COLUMNS, messageReader, messageValues, READ_COLUMNS, toQueue, type QueueRow } from './rows.js';
import { Wakeups } from '../wakeups.js';

/**
 * `process`: a write is acknowledged once it is in the WAL (survives a crash of the
 * server process; the OS writes it out). `power`: fsync on every commit as well
 * (survives power loss). `none`: no journal at all, for the in-memory store.
 */
export type Durability = 'process' | 'power' | 'none';

export interface SqliteOptions {
  /** A file path, or ':memory:'. */
  path: string;
  durability?: Durability;
}

const SWEEP_BATCH = 5000;

export class SqliteStore implements Store {
  readonly kind: string;
  private readonly db: Database.Database;
  private readonly commit: GroupCommit;
  private readonly wakeups = new Wakeups();
  private readonly touched = new Set<number>();
  /**
   * Queue records by account and name. This process is the database's only writer, so
   * the cache is exact: every write to a queue row drops its entry.
   */
  private readonly queueCache = new Map<string, QueueRecord>();
  private readonly q: ReturnType<SqliteStore['prepare']>;
  private readonly dl: SqliteDeadLetterOps;
  private readonly fifo: SqliteFifoOps;
  private readonly deaths: SqliteDeathOps;
  private readonly checkpointer?: Checkpointer;
  private readonly messageAt: ReturnType<typeof messageReader>;

  constructor(opts: SqliteOptions) {
    const memory = opts.path === ':memory:';
    this.kind = memory ? 'memory' : 'sqlite';
    if (!memory) mkdirSync(dirname(opts.path), { recursive: true });
    this.db = new Database(opts.path);
    const durability = opts.durability ?? (memory ? 'none' : 'process');
    if (!memory) this.db.pragma('journal_mode = WAL');
    const synchronous = durability === 'power' ? 'FULL' : durability === 'process' ? 'NORMAL' : 'OFF';
    this.db.pragma(`synchronous = ${synchronous}`);
    this.db.pragma('busy_timeout = 5000');
    this.db.pragma('cache_size = -65536');
    this.migrate();
    if (!memory) {
      this.db.pragma(`wal_autocheckpoint = ${FALLBACK_CHECKPOINT_PAGES}`);
      this.checkpointer = new Checkpointer(opts.path, synchronous);
    }
    this.q = this.prepare();
    this.commit = new GroupCommit(this.db, {
      afterCommit: () => this.wake(),
      jobDone: (ok) => this.dl.jobDone(ok),
      beforeCommit: () => this.dl.flushCounts(),
      rolledBack: () => this.dl.discardCounts(),
    });
    this.messageAt = messageReader(this.db);
    this.dl = new SqliteDeadLetterOps(this.db, this.commit, (id) => this.touched.add(id));
    this.deaths = new SqliteDeathOps(this.db, (id) => this.touched.add(id), this.messageAt);
    this.fifo = new SqliteFifoOps(this.db, this.deaths, (seqs, req) => this.claim(seqs, req), this.messageAt);
  }

  private migrate(): void {
    const version = this.db.pragma('user_version', { simple: true }) as number;
    for (let v = version; v < migrations.length; v++) {
      this.db.transaction(() => {
        this.db.exec(migrations[v]!);
        this.db.pragma(`user_version = ${v + 1}`);
      })();
    }
  }

  private prepare() {
    const db = this.db;
    const placeholders = MESSAGE_COLUMNS.map(() => '?').join(',');
    return {
      insertQueue: db.prepare(
        `INSERT INTO queues (account_id, name, fifo, attributes, tags, created_at, modified_at, last_purge_at)
         VALUES (?,?,?,?,?,?,?,NULL) ON CONFLICT (account_id, name) DO NOTHING`,
      ),
      queueByName: db.prepare('SELECT * FROM queues WHERE account_id = ? AND name = ?'),
      queueById: db.prepare('SELECT * FROM queues WHERE id = ?'),
      listQueues: db.prepare(
        `SELECT * FROM queues WHERE account_id = ? AND substr(name, 1, length(?)) = ? AND name > ? ORDER BY name ${BOUND_LIMIT}`,
      ),
      updateQueue: db.prepare('UPDATE queues SET attributes = ?, tags = ?, modified_at = ? WHERE id = ?'),
      deleteQueue: db.prepare('DELETE FROM queues WHERE id = ?'),
      deleteQueueMessages: db.prepare('DELETE FROM messages WHERE queue_id = ?'),
      markPurge: db.prepare('UPDATE queues SET last_purge_at = ? WHERE id = ? AND (last_purge_at IS NULL OR last_purge_at <= ?)'),
      insertMessage: db.prepare(`INSERT INTO messages (${MESSAGE_COLUMNS.join(',')}) VALUES (${placeholders})`),
      // Only what deciding needs: the chosen rows are read whole by the claim's RETURNING.
      ready: db.prepare(
        `SELECT seq, receive_count FROM messages WHERE queue_id = ? AND visible_at <= ? AND sent_at >= ?
         ORDER BY visible_at, seq ${BOUND_LIMIT}`,
      ).raw(true),
      // One statement claims a whole receive: the positions come as a JSON array.
      claim: db.prepare(
        `UPDATE messages SET visible_at = ?, receive_count = receive_count + 1,
           first_received_at = COALESCE(first_received_at, ?), received_at = ?, receipt_token = ?
         WHERE seq IN (SELECT value FROM json_each(?)) RETURNING ${READ_COLUMNS}`,
      ).raw(true),
      receiptRow: db.prepare('SELECT receipt_token, visible_at, received_at FROM messages WHERE seq = ? AND queue_id = ?'),
      deleteMessage: db.prepare('DELETE FROM messages WHERE seq = ? AND queue_id = ?'),
      deleteHeld: db.prepare('DELETE FROM messages WHERE seq = ? AND queue_id = ? AND receipt_token = ? AND visible_at > ?'),
      setVisibleAt: db.prepare('UPDATE messages SET visible_at = ? WHERE seq = ?'),
      countVisible: db.prepare('SELECT count(*) AS n FROM messages WHERE queue_id = ? AND visible_at <= ?'),
      countHidden: db.prepare(
        `SELECT count(*) AS n, coalesce(sum(receive_count > 0), 0) AS inflight
           FROM messages WHERE queue_id = ? AND visible_at > ?`,
      ),
      nextVisible: db.prepare('SELECT min(visible_at) AS t FROM messages WHERE queue_id = ? AND visible_at > ?'),
      allQueues: db.prepare('SELECT * FROM queues ORDER BY id'),
      sweep: db.prepare(
        `DELETE FROM messages WHERE seq IN (SELECT seq FROM messages WHERE queue_id = ? AND sent_at < ? LIMIT ${SWEEP_BATCH})`,
      ),
    };
  }

  private wake(): void {
    if (this.touched.size === 0) return;
    const ids = [...this.touched];
    this.touched.clear();
    for (const id of ids) this.wakeups.fire(id);
  }

  async createQueue(queue: Omit<QueueRecord, 'id'>): Promise<{ queue: QueueRecord; created: boolean }> {
    return this.commit.run(() => {
      const res = this.q.insertQueue.run(
        queue.accountId, queue.name, queue.fifo ? 1 : 0, JSON.stringify(queue.attributes),
        JSON.stringify(queue.tags), queue.createdAt, queue.modifiedAt,
      );
      const row = this.q.queueByName.get(queue.accountId, queue.name) as QueueRow;
      return { queue: toQueue(row), created: res.changes === 1 };
    });
  }

  async getQueue(accountId: string, name: string): Promise<QueueRecord | undefined> {
    const key = `${accountId}/${name}`;
    const cached = this.queueCache.get(key);
    if (cached) return cached;
    const row = this.q.queueByName.get(accountId, name) as QueueRow | undefined;
    if (!row) return undefined;
    // Frozen, because every caller shares the cached record.
    const queue = toQueue(row);
    Object.freeze(queue.attributes);
    Object.freeze(queue.tags);
    this.queueCache.set(key, Object.freeze(queue));
    return queue;
  }

  private forgetQueue(id: number): void {
    for (const [key, q] of this.queueCache) if (q.id === id) this.queueCache.delete(key);
  }

  async getQueueById(id: number): Promise<QueueRecord | undefined> {
    const row = this.q.queueById.get(id) as QueueRow | undefined;
    return row && toQueue(row);
  }

  async listQueues(accountId: string, prefix: string, after: string | undefined, limit: number): Promise<QueueRecord[]> {
    return (this.q.listQueues.all(accountId, prefix, prefix, after ?? '', limit) as QueueRow[]).map(toQueue);
  }

  async updateQueue(id: number, patch: QueuePatch): Promise<QueueRecord | undefined> {
    return this.commit.run(() => {
      const row = this.q.queueById.get(id) as QueueRow | undefined;
      if (!row) return undefined;
      const q = toQueue(row);
      this.forgetQueue(id);
      const attributes = { ...q.attributes, ...patch.setAttributes };
      for (const k of patch.removeAttributes ?? []) delete attributes[k];
      const tags = { ...q.tags, ...patch.setTags };
      for (const k of patch.removeTags ?? []) delete tags[k];
      this.q.updateQueue.run(JSON.stringify(attributes), JSON.stringify(tags), patch.modifiedAt ?? q.modifiedAt, id);
      return { ...q, attributes, tags, modifiedAt: patch.modifiedAt ?? q.modifiedAt };
    });
  }

  async deleteQueue(id: number): Promise<boolean> {
    return this.commit.run(() => {
      this.forgetQueue(id);
      this.q.deleteQueueMessages.run(id);
      this.dl.forgetQueue(id);
      this.fifo.dropQueue(id);
      this.deaths.dropQueue(id);
      return this.q.deleteQueue.run(id).changes === 1;
    });
  }

  async purgeQueue(id: number, now: number, cooldownMs: number): Promise<boolean> {
    return this.commit.run(() => {
      if (this.q.markPurge.run(now, id, now - cooldownMs).changes === 0) return false;
      this.forgetQueue(id);
      this.q.deleteQueueMessages.run(id);
      return true;
    });
  }

  async send(queueId: number, messages: NewMessage[], limit?: LengthLimit): Promise<StoredMessage[]> {
    return this.commit.run(() => {
      let stored = 0;
      const out: StoredMessage[] = [];
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
        if (limit && !this.deaths.admit(queueId, m, limit)) {
          out.push({ ...s, seq: 0, rejected: true });
          continue;
        }
        out.push(s);
        s.seq = Number(this.q.insertMessage.run(...messageValues(queueId, m)).lastInsertRowid);
        this.fifo.remember(queueId, m, s.seq);
        stored++;
      }
      if (stored) this.touched.add(queueId);
      this.dl.count(queueId, stored, 0, 0);
      return out;
    });
  }

  async receive(queueId: number, req: ReceiveRequest): Promise<ReceiveResult> {
    return this.commit.run(() => {
      const result = req.fifo ? this.fifo.receive(queueId, req) : this.receiveStandard(queueId, req);
      this.dl.count(queueId, 0, result.messages.length, 0);
      return result;
    });
  }

  private receiveStandard(queueId: number, req: ReceiveRequest): ReceiveResult {
    const chosen: number[] = [];
    let deadLettered = 0;
    // Dead-lettered rows leave the range, so another pass fills the places they freed;
    // the rows already chosen are still in range until the claim and are skipped.
    for (let pass = 0, refill = true; pass < 10 && refill && chosen.length < req.max; pass++) {
      const rows = this.q.ready.all(queueId, req.now, req.retentionCutoff, req.max) as [number, number][];
      refill = false;
      for (const [seq, receiveCount] of rows) {
        if (chosen.length >= req.max) break;
        if (chosen.includes(seq)) continue;
        const dl = req.deadLetter;
        if (dl && receiveCount >= dl.maxReceiveCount) {
          refill = true;
          this.deaths.deadLetter(this.messageAt(seq, queueId)!, dl, req.now);
          deadLettered++;
          continue;
        }
        chosen.push(seq);
      }
    }
    return { messages: this.claim(chosen, req), deadLettered };
  }

  /**
   * Gives the messages at `seqs` a new receipt, in one statement: hidden for the
   * visibility timeout, counted as received. They share one token (a handle names the
   * position too, so each stays unique). Returned in the order of `seqs`.
   */
  private claim(seqs: number[], req: ReceiveRequest): StoredMessage[] {
    if (seqs.length === 0) return [];
    const rows = this.q.claim.all(req.now + req.visibilityTimeoutMs, req.now, req.now, req.newToken(), JSON.stringify(seqs)) as [number][];
    const messages = rows.map((r) => fromColumns(r));
    return messages.sort((a, b) => seqs.indexOf(a.seq) - seqs.indexOf(b.seq));
  }

  async deleteMessages(queueId: number, receipts: ReceiptRef[], rule: DeleteRule): Promise<ReceiptOutcome[]> {
    return this.commit.run(() => {
      const outcomes = receipts.map((r) => {
        // One statement deletes in the common case: with any receipt on a standard queue,
        // with the current unexpired one on a FIFO queue (deleteOutcome's rule). Only a
        // receipt that deleted nothing needs the row read, to say why.
        const deleted = rule.requireUnexpired
          ? this.q.deleteHeld.run(r.seq, queueId, r.token, rule.now).changes
          : this.q.deleteMessage.run(r.seq, queueId).changes;
        return deleted ? 'ok' : deleteOutcome(this.receiptRow(r.seq, queueId), r, rule);
      });
      const ok = outcomes.filter((o) => o === 'ok').length;
      this.dl.count(queueId, 0, 0, ok);
      // A FIFO delete releases its group: wake a waiter if that left a message to hand out.
      if (ok && rule.requireUnexpired && this.fifo.anyAvailable(queueId, rule.now)) this.touched.add(queueId);
      return outcomes;
    });
  }

  async changeVisibility(queueId: number, changes: VisibilityChange[], now: number): Promise<ReceiptOutcome[]> {
    return this.commit.run(() =>
      changes.map((c) => {
        const { outcome, visibleAt } = visibilityOutcome(this.receiptRow(c.seq, queueId), c, now);
        if (outcome === 'ok') {
          this.q.setVisibleAt.run(visibleAt, c.seq);
          if (visibleAt! <= now) this.touched.add(queueId);
        }
        return outcome;
      }),
    );
  }

  private receiptRow(seq: number, queueId: number) {
    const r = this.q.receiptRow.get(seq, queueId) as
      | { receipt_token: string | null; visible_at: number; received_at: number | null }
      | undefined;
    return r && { receiptToken: r.receipt_token, visibleAt: r.visible_at, receivedAt: r.received_at };
  }

  async countInflight(queueId: number, now: number): Promise<number> {
    return (this.q.countHidden.get(queueId, now) as { inflight: number }).inflight;
  }

  async countMessages(queueId: number, now: number): Promise<MessageCounts> {
    const visible = (this.q.countVisible.get(queueId, now) as { n: number }).n;
    const hidden = this.q.countHidden.get(queueId, now) as { n: number; inflight: number };
    return { visible, inflight: hidden.inflight, delayed: hidden.n - hidden.inflight };
  }

  async nextVisibleAt(queueId: number, now: number): Promise<number | undefined> {
    const r = this.q.nextVisible.get(queueId, now) as { t: number | null };
    return r.t ?? undefined;
  }

  async allQueues(): Promise<QueueRecord[]> {
    return (this.q.allQueues.all() as QueueRow[]).map(toQueue);
  }

  async sweepExpired(now: number): Promise<number> {
    return this.commit.run(() => this.fifo.expire(now));
  }

  async deleteSentBefore(queueId: number, cutoff: number): Promise<number> {
    let total = 0;
    // Batches keep each transaction short, so a large sweep never stalls requests.
    for (;;) {
      const n = await this.commit.run(() => this.q.sweep.run(queueId, cutoff).changes);
      total += n;
      if (n < SWEEP_BATCH) return total;
    }
  }

  async expireMessages(queueId: number, now: number, limit: number, target: DeadLetterTarget | undefined): Promise<number> {
    return this.commit.run(() => this.deaths.expire(queueId, now, limit, target));
  }

  async rejectMessage(queueId: number, receipt: ReceiptRef, now: number, target: DeadLetterTarget): Promise<ReceiptOutcome> {
    return this.commit.run(() => this.deaths.reject(queueId, receipt, now, target));
  }

  /** One process owns the database file, so it always holds every lease. */
  async tryLease(): Promise<boolean> {
    return true;
  }

  queueStats(queueId: number): Promise<QueueStats> {
    return this.dl.queueStats(queueId);
  }

  peekMessages(queueId: number, afterSeq: number, limit: number): Promise<StoredMessage[]> {
    return this.dl.peekMessages(queueId, afterSeq, limit);
  }

  createMoveTask(task: NewMoveTask, maxActivePerAccount: number): Promise<MoveTaskRecord | 'sourceBusy' | 'accountLimit'> {
    return this.dl.createMoveTask(task, maxActivePerAccount);
  }

  getMoveTask(id: string): Promise<MoveTaskRecord | undefined> {
    return this.dl.getMoveTask(id);
  }

  listMoveTasks(sourceQueueId: number, limit: number): Promise<MoveTaskRecord[]> {
    return this.dl.listMoveTasks(sourceQueueId, limit);
  }

  cancelMoveTask(id: string): Promise<MoveTaskRecord | undefined> {
    return this.dl.cancelMoveTask(id);
  }

  leaseMoveTasks(owner: string, now: number, leaseUntil: number): Promise<MoveTaskRecord[]> {
    return this.dl.leaseMoveTasks(owner, now, leaseUntil);
  }

  releaseMoveTasks(owner: string): Promise<void> {
    return this.dl.releaseMoveTasks(owner);
  }

  runMoveBatch(taskId: string, batch: MoveBatch): Promise<MoveBatchResult> {
    return this.dl.runMoveBatch(taskId, batch);
  }

  async secret(name: string, fresh: string): Promise<string> {
    return this.commit.run(() => {
      this.db.prepare('INSERT OR IGNORE INTO secrets (name, value) VALUES (?, ?)').run(name, fresh);
      return (this.db.prepare('SELECT value FROM secrets WHERE name = ?').get(name) as { value: string }).value;
    });
  }

  onAvailable(queueId: number, listener: () => void): () => void {
    return this.wakeups.on(queueId, listener);
  }

  async close(): Promise<void> {
    this.commit.flush();
    await this.checkpointer?.close();
    if (this.db.open) this.db.close();
  }
}

import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { DeadLettered } from '../../engine/store/dead-letters.js';
import type { WakeupStore } from '../../engine/store/wakeups.js';
import type { QueueCache } from '../queue-cache.js';
import { WakeupListeners } from '../wakeup-listeners.js';

export const AVAILABLE_CHANNEL = 'redrive_available';
export const QUEUES_CHANNEL = 'redrive_queues';

const LOCK_SQL = 'SELECT pg_advisory_lock(hashtextextended($1, 0))';
/** NOTIFY payloads must stay under 8000 bytes. */
const MAX_IDS_PER_NOTIFY = 500;

/** What a send batch wrote to one queue: all its messages, and those ready now (readyCount). */
export interface SentCount {
  total: number;
  ready: number | undefined;
}

export interface PostgresWakeupOptions {
  /** How often queues with waiting receives are checked, in case a notification was lost. */
  fallbackPollMs: number;
  log?: (msg: string, err?: unknown) => void;
}

/**
 * Wake-ups across nodes. Each node keeps one dedicated connection that LISTENs; a write
 * that made messages available calls `wake`, which wakes this node's waiting receives
 * at once and tells the other nodes with one NOTIFY per event-loop turn.
 *
 * A send batch NOTIFYs inside its own statement (batched-writes.ts), with the number of
 * messages left for the other nodes, at no round trip of its own; at most two such
 * batches are in flight per node. Other writes (FIFO sends, visibility changes, moves)
 * NOTIFY after they committed, in a transaction of their own with synchronous_commit off:
 * PostgreSQL serialises the commits of all transactions that NOTIFY behind one lock for
 * the whole server, held across their WAL flush, which would serialise every such write.
 * Sent afterwards, it costs no flush, and a receiver woken by it always finds the
 * committed messages. A node that dies between the commit and the NOTIFY loses the
 * wake-up; the fallback poll covers that.
 *
 * A node alone sends no NOTIFY at all (it would only come back to its own LISTEN
 * connection): it looks for other nodes' LISTEN connections in pg_stat_activity when it
 * connects and at every fallback poll, and a node that starts announces itself with a
 * NOTIFY, so the others start notifying at once.
 */
export class PostgresWakeups implements WakeupStore {
  readonly nodeId = randomUUID().slice(0, 8);
  private readonly listeners = new WakeupListeners();
  private readonly pending = new Set<number>();
  private flushScheduled = false;
  private flushing?: Promise<void>;
  private client?: pg.Client;
  private closed = false;
  private reconnectDelay = 100;
  private pollTimer?: NodeJS.Timeout;
  private reconnectTimer?: NodeJS.Timeout;
  /** Whether another node listens (until known, assume so). */
  private peers = true;
  /** A session advisory lock held on the LISTEN connection (held-deliveries.ts), taken again on every reconnect. */
  private lockKey?: string;

  constructor(
    private readonly pool: pg.Pool,
    private readonly clientConfig: pg.ClientConfig,
    private readonly cache: QueueCache,
    private readonly opts: PostgresWakeupOptions,
  ) {}

  async start(): Promise<void> {
    await this.connect();
    this.pollTimer = setInterval(() => void this.poll().then(() => this.findPeers()), this.opts.fallbackPollMs);
    this.pollTimer.unref();
  }

  subscribe(queueId: number, listener: (count?: number) => void, capacity?: () => number): () => void {
    return this.listeners.subscribe(queueId, listener, capacity);
  }

  /** The destinations of what an operation dead-lettered; call after its commit. */
  wakeDestinations(deadLettered: DeadLettered[]): void {
    for (const id of new Set(deadLettered.map((d) => d.to))) if (id !== undefined) this.wake(id);
  }

  /** Call after the commit that made messages of `queueId` available. */
  wake(queueId: number): void {
    this.listeners.wake(queueId);
    if (!this.peers) return;
    this.pending.add(queueId);
    this.scheduleFlush();
  }

  /**
   * For a write that tells the other nodes itself, in its own statement (a send batch,
   * batched-writes.ts): call after its commit; wakes this node's waiting receives only.
   */
  wakeLocal(queueId: number, count?: number): void {
    this.listeners.wake(queueId, count);
  }

  /**
   * The payload of a NOTIFY telling the other nodes of `sent` (messages made available,
   * by queue), or null when no one needs telling: while this node is alone, and for a
   * queue whose messages this node's idle long polls will take when the batch wakes them
   * (their capacity, counted now). Telling the others as well would only send a receive
   * on every node to the database to find nothing. If a poll leaves before it takes
   * them, the fallback poll finds them.
   */
  payload(sent: ReadonlyMap<number, SentCount>): string | null {
    if (!this.peers) return null;
    const ids: number[] = [];
    const counts: string[] = [];
    for (const [queueId, { total, ready }] of sent) {
      const local = this.listeners.capacity(queueId);
      if (total <= local) continue;
      ids.push(queueId);
      // How many are left for the other nodes' receives (a counted wake-up there); '' if unknown.
      counts.push(ready === undefined ? '' : String(Math.max(1, ready - local)));
    }
    // `node:ids:counts`: a node that reads only `node:ids` (0.1.0) still wakes on it.
    return ids.length && ids.length <= MAX_IDS_PER_NOTIFY
      ? `${this.nodeId}:${ids.join(',')}:${counts.join(',')}`
      : null;
  }

  /**
   * One NOTIFY at a time per node: what is woken while one is on its way goes out in
   * the next, so under load many writes share one notification.
   */
  private scheduleFlush(): void {
    if (this.flushScheduled || this.flushing || this.pending.size === 0 || this.closed) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      if (this.closed) return; // close() sends what is pending
      this.flushing = this.flush().finally(() => {
        this.flushing = undefined;
        this.scheduleFlush();
      });
    });
  }

  private async flush(): Promise<void> {
    const ids = [...this.pending];
    this.pending.clear();
    for (let i = 0; i < ids.length; i += MAX_IDS_PER_NOTIFY) {
      // Only hex digits, numbers, ':' and ',': safe to inline.
      const payload = `'${this.nodeId}:${ids.slice(i, i + MAX_IDS_PER_NOTIFY).join(',')}'`;
      try {
        await this.pool.query(
          `BEGIN; SET LOCAL synchronous_commit = off; SELECT pg_notify('${AVAILABLE_CHANNEL}', ${payload}); COMMIT`,
        );
      } catch (err) {
        this.opts.log?.('NOTIFY failed; other nodes will see the messages at their next fallback poll', err);
      }
    }
  }

  private async connect(): Promise<void> {
    const client = new pg.Client(this.clientConfig);
    client.on('notification', (n) => this.onNotification(n));
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client));
    await client.connect();
    if (this.lockKey !== undefined) await client.query(LOCK_SQL, [this.lockKey]);
    // The statement other nodes look for in pg_stat_activity (findPeers), then the hello.
    await client.query(`LISTEN ${AVAILABLE_CHANNEL}; LISTEN ${QUEUES_CHANNEL}`);
    this.client = client;
    await this.findPeers();
    await this.pool.query(`SELECT pg_notify('${AVAILABLE_CHANNEL}', '${this.nodeId}:')`);
    this.reconnectDelay = 100;
    // Whatever changed while no one listened: forget cached queues, re-check waiters.
    this.cache.clear();
    this.cache.enabled = true;
    for (const id of this.listeners.queueIds()) this.listeners.wake(id);
  }

  /**
   * Holds the session advisory lock `key` for as long as this node runs: on the LISTEN
   * connection, so a node opens no connection more than pool_size + 1. The LISTEN is
   * issued again after it, as the last statement findPeers looks for.
   */
  async holdLock(key: string): Promise<void> {
    this.lockKey = key;
    const c = this.client;
    if (!c) return;
    await c.query(LOCK_SQL, [key]);
    await c.query(`LISTEN ${AVAILABLE_CHANNEL}; LISTEN ${QUEUES_CHANNEL}`);
  }

  private lost(client: pg.Client, err?: unknown): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.cache.enabled = false;
    this.cache.clear();
    client.end().catch(() => undefined);
    if (this.closed) return;
    this.opts.log?.('LISTEN connection lost; reconnecting', err);
    const retry = () => {
      this.reconnectTimer = undefined;
      if (this.closed) return;
      this.connect().catch((e) => {
        this.opts.log?.('LISTEN reconnect failed', e);
        this.reconnectDelay = Math.min(this.reconnectDelay * 2, 5000);
        this.reconnectTimer = setTimeout(retry, this.reconnectDelay);
      });
    };
    this.reconnectTimer = setTimeout(retry, this.reconnectDelay);
  }

  private onNotification(n: pg.Notification): void {
    if (n.channel === QUEUES_CHANNEL) {
      this.cache.forget(Number(n.payload));
      return;
    }
    const [from, list, countList] = (n.payload ?? '').split(':');
    if (from === this.nodeId) return; // already woken locally by wake()
    this.peers = true;
    if (!list) return; // a node announcing itself
    const counts = countList?.split(',');
    list.split(',').forEach((id, i) => {
      const count = counts?.[i];
      this.listeners.wake(Number(id), count ? Number(count) : undefined);
    });
  }

  /**
   * Whether another node's LISTEN connection is open on this database: a connection
   * whose last statement is the LISTEN of connect() (or one of another user, whose
   * statements this one may not see). A failed look counts as "yes".
   */
  private async findPeers(): Promise<void> {
    // node-postgres keeps the backend pid from BackendKeyData, untyped.
    const self = (this.client as { processID?: number } | undefined)?.processID;
    if (self === undefined || this.closed) return;
    try {
      const { rows } = await this.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> $1
            AND (query LIKE 'LISTEN ${AVAILABLE_CHANNEL};%' OR query = '<insufficient privilege>')`,
        [self],
      );
      this.peers = rows[0]!.n > 0;
    } catch {
      this.peers = true;
    }
  }

  /** The slow path: queues with waiting receives that hold visible messages. */
  private async poll(): Promise<void> {
    const ids = this.listeners.queueIds();
    if (ids.length === 0 || this.closed) return;
    try {
      const { rows } = await this.pool.query<{ q: string }>(
        `SELECT q FROM unnest($1::bigint[]) AS q
          WHERE EXISTS (SELECT 1 FROM deliveries WHERE queue_id = q AND visible_at <= $2)`,
        [ids, Date.now()],
      );
      for (const r of rows) this.listeners.wake(Number(r.q));
    } catch (err) {
      this.opts.log?.('fallback poll failed', err);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.flushing;
    await this.flush();
    clearInterval(this.pollTimer);
    clearTimeout(this.reconnectTimer);
    const client = this.client;
    this.client = undefined;
    this.cache.enabled = false;
    await client?.end().catch(() => undefined);
  }
}

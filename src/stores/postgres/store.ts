import pg from 'pg';
import { DEFAULT_REGION } from '../../engine/kernel/addressing.js';
import type { Store, StoreStats } from '../../engine/store/store.js';
import { QueueCache } from '../queue-cache.js';
import { guardStorage } from '../storage-guard.js';
import { PostgresDeadLetters } from './dead-letters.js';
import { PostgresActivity } from './activity.js';
import { PostgresExchanges } from './exchanges.js';
import { PostgresPolicies } from './policies.js';
import { PostgresMaintenance } from './maintenance.js';
import { PostgresMessages } from './messages.js';
import { migrate } from './migrate.js';
import { PostgresMoveTasks } from './move-tasks.js';
import { PostgresQueues } from './queues.js';
import { postgresStorageError } from './storage-errors.js';
import { PostgresWakeups } from './wakeups.js';
import { PostgresHeldDeliveries } from './held-deliveries.js';

export interface PostgresOptions {
  /**
   * postgres://user@host:port/db, with Redrive's own parameters (docs/scaling.md):
   * `pool_size` (default 10), `connect_timeout_ms` (default 5000), `query_timeout_ms`
   * (default 30000).
   */
  url: string;
  /** How often waiting receives re-check their queue in case a NOTIFY was lost. */
  fallbackPollMs?: number;
  log?: (msg: string, err?: unknown) => void;
  /** The region queues from before regions move into when the schema is migrated (the server's `--region`). */
  defaultRegion?: string;
}

export interface PostgresUrl {
  connectionString: string;
  poolSize: number;
  /** How long a request waits for a pool connection (a free one, or a new one connecting). */
  connectTimeoutMs: number;
  /** How long one statement may take, on the client and on the server (statement_timeout). */
  queryTimeoutMs: number;
}

/** Splits Redrive's own URL parameters from those node-postgres understands. */
function parsePostgresUrl(url: string): PostgresUrl {
  const u = new URL(url);
  const param = (name: string, fallback: number): number => {
    const raw = u.searchParams.get(name);
    u.searchParams.delete(name);
    const n = raw === null ? fallback : Number(raw);
    if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer, not "${raw}"`);
    return n;
  };
  const poolSize = param('pool_size', 10);
  const connectTimeoutMs = param('connect_timeout_ms', 5000);
  const queryTimeoutMs = param('query_timeout_ms', 30_000);
  return { connectionString: u.toString(), poolSize, connectTimeoutMs, queryTimeoutMs };
}

/**
 * A store in PostgreSQL, shared by any number of Redrive nodes. Every operation is one
 * statement or one transaction; the only state in memory is a queue-record cache kept
 * exact by NOTIFY (queue-cache.ts) and the wake-up listeners of this node's long polls.
 */
export class PostgresStore implements Store {
  readonly kind = 'postgres';
  readonly queues: PostgresQueues;
  readonly messages: PostgresMessages;
  readonly deadLetters: PostgresDeadLetters;
  readonly moveTasks: PostgresMoveTasks;
  readonly maintenance: PostgresMaintenance;
  readonly exchanges: PostgresExchanges;
  readonly policies: PostgresPolicies;
  readonly wakeups: PostgresWakeups;
  readonly activity: PostgresActivity;
  readonly heldDeliveries: PostgresHeldDeliveries;

  private constructor(
    private readonly pool: pg.Pool,
    clientConfig: pg.ClientConfig,
    opts: PostgresOptions,
  ) {
    const cache = new QueueCache(false);
    this.wakeups = new PostgresWakeups(pool, clientConfig, cache, {
      fallbackPollMs: opts.fallbackPollMs ?? 1500,
      log: opts.log,
    });
    const deadLetters = new PostgresDeadLetters(pool, this.wakeups);
    this.deadLetters = guardStorage(deadLetters, postgresStorageError);
    this.queues = guardStorage(new PostgresQueues(pool, cache), postgresStorageError);
    this.messages = guardStorage(new PostgresMessages(pool, deadLetters, this.wakeups), postgresStorageError);
    this.moveTasks = guardStorage(new PostgresMoveTasks(pool, this.wakeups), postgresStorageError);
    this.maintenance = guardStorage(new PostgresMaintenance(pool), postgresStorageError);
    this.activity = guardStorage(new PostgresActivity(pool), postgresStorageError);
    this.exchanges = guardStorage(new PostgresExchanges(pool), postgresStorageError);
    this.policies = guardStorage(new PostgresPolicies(pool), postgresStorageError);
    this.heldDeliveries = guardStorage(new PostgresHeldDeliveries(pool, this.wakeups), postgresStorageError);
  }

  /** Connects, brings the schema up to date and starts listening for other nodes. */
  static async open(opts: PostgresOptions): Promise<PostgresStore> {
    const { connectionString, poolSize, connectTimeoutMs, queryTimeoutMs } = parsePostgresUrl(opts.url);
    const clientConfig: pg.ClientConfig = {
      connectionString,
      application_name: 'redrive',
      connectionTimeoutMillis: connectTimeoutMs,
      // The claims rely on READ COMMITTED re-checking rows that changed under a statement
      // (docs/scaling.md), whatever the database's default.
      options: '-c default_transaction_isolation=read\\ committed',
    };
    // Bounded statements: a database that stops answering (stalled, or its host gone
    // without a reset) fails a request after query_timeout_ms instead of holding it, and
    // the server stops the statement too. The pool drops a connection whose query failed.
    const pool = new pg.Pool({
      ...clientConfig,
      max: poolSize,
      query_timeout: queryTimeoutMs,
      statement_timeout: queryTimeoutMs,
    });
    // An idle connection that breaks (a database restart) must not crash the node.
    pool.on('error', (err) => opts.log?.('idle PostgreSQL connection failed', err));
    try {
      // Migrations on their own connection, unbounded: a backfill may take long.
      await withClient(clientConfig, (c) => migrate(c, opts.defaultRegion ?? DEFAULT_REGION));
      const store = new PostgresStore(pool, clientConfig, opts);
      await store.wakeups.start();
      return store;
    } catch (e) {
      await pool.end().catch(() => undefined);
      throw e;
    }
  }

  stats(): StoreStats {
    const p = this.pool;
    return { pool: { total: p.totalCount, idle: p.idleCount, waiting: p.waitingCount, max: p.options.max ?? 10 } };
  }

  async close(): Promise<void> {
    await this.wakeups.close();
    await this.pool.end();
  }
}

async function withClient<T>(config: pg.ClientConfig, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client(config);
  // A connection that breaks between statements must not crash the node.
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

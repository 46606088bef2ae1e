import pg from 'pg';
import type { Store, StoreStats } from '../../engine/store/store.js';
import { QueueCache } from '../queue-cache.js';
import { guardStorage } from '../storage-guard.js';
import { PgDeadLetters } from './dead-letters.js';
import { PgActivity } from './activity.js';
import { PgExchanges } from './exchanges.js';
import { PgMaintenance } from './maintenance.js';
import { PgMessages } from './messages.js';
import { migrate } from './migrate.js';
import { PgMoveTasks } from './move-tasks.js';
import { PgQueues } from './queues.js';
import { postgresStorageError } from './storage-errors.js';
import { PgWakeups } from './wakeups.js';

export interface PostgresOptions {
  /** postgres://user@host:port/db; `?pool_size=N` sets the pool size (default 10). */
  url: string;
  /** How often waiting receives re-check their queue in case a NOTIFY was lost. */
  fallbackPollMs?: number;
  log?: (msg: string, err?: unknown) => void;
}

/** Splits Redrive's own URL parameters from those node-postgres understands. */
export function parsePostgresUrl(url: string): { connectionString: string; poolSize: number } {
  const u = new URL(url);
  const size = u.searchParams.get('pool_size');
  u.searchParams.delete('pool_size');
  const poolSize = size === null ? 10 : Number(size);
  if (!Number.isInteger(poolSize) || poolSize < 1) throw new Error(`pool_size must be a positive integer, not "${size}"`);
  return { connectionString: u.toString(), poolSize };
}

/**
 * A store in PostgreSQL, shared by any number of Redrive nodes. Every operation is one
 * statement or one transaction; the only state in memory is a queue-record cache kept
 * exact by NOTIFY (queue-cache.ts) and the wake-up listeners of this node's long polls.
 */
/**
 * A store in PostgreSQL, shared by any number of Redrive nodes. Every operation is one
 * statement or one transaction; the only state in memory is a queue-record cache kept
 * exact by NOTIFY (queue-cache.ts) and the wake-up listeners of this node's long polls.
 */
export class PostgresStore implements Store {
  readonly kind = 'postgres';
  readonly queues: PgQueues;
  readonly messages: PgMessages;
  readonly deadLetters: PgDeadLetters;
  readonly moveTasks: PgMoveTasks;
  readonly maintenance: PgMaintenance;
  readonly exchanges: PgExchanges;
  readonly wakeups: PgWakeups;
  readonly activity: PgActivity;

  private constructor(private readonly pool: pg.Pool, clientConfig: pg.ClientConfig, opts: PostgresOptions) {
    const cache = new QueueCache(false);
    this.wakeups = new PgWakeups(pool, clientConfig, cache, { fallbackPollMs: opts.fallbackPollMs ?? 1500, log: opts.log });
    const deadLetters = new PgDeadLetters(pool, this.wakeups);
    this.deadLetters = guardStorage(deadLetters, postgresStorageError);
    this.queues = guardStorage(new PgQueues(pool, cache), postgresStorageError);
    this.messages = guardStorage(new PgMessages(pool, deadLetters, this.wakeups), postgresStorageError);
    this.moveTasks = guardStorage(new PgMoveTasks(pool, this.wakeups), postgresStorageError);
    this.maintenance = guardStorage(new PgMaintenance(pool), postgresStorageError);
    this.activity = guardStorage(new PgActivity(pool), postgresStorageError);
    this.exchanges = guardStorage(new PgExchanges(pool), postgresStorageError);
  }

  /** Connects, brings the schema up to date and starts listening for other nodes. */
  static async open(opts: PostgresOptions): Promise<PostgresStore> {
    const { connectionString, poolSize } = parsePostgresUrl(opts.url);
    const clientConfig: pg.ClientConfig = {
      connectionString, application_name: 'redrive',
      // The claims rely on READ COMMITTED re-checking rows that changed under a statement
      // (docs/scaling.md), whatever the database's default.
      options: '-c default_transaction_isolation=read\\ committed',
    };
    const pool = new pg.Pool({ ...clientConfig, max: poolSize });
    // An idle connection that breaks (a database restart) must not crash the node.
    pool.on('error', (err) => opts.log?.('idle PostgreSQL connection failed', err));
    try {
      await migrate(pool);
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

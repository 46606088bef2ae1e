import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';
import { config } from './config.js';
import { atInterrupt, processCpuSeconds } from './processes.js';

/**
 * The PostgreSQL side of the Postgres workloads: a fresh database per run, dropped
 * afterwards (also when the run is interrupted), and the CPU the database server uses.
 */

async function admin<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, values?: unknown[]): Promise<R[]> {
  const client = new pg.Client({ connectionString: config.postgresUrl, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    return (await client.query<R>(sql, values)).rows;
  } finally {
    await client.end();
  }
}

export async function postgresReachable(): Promise<boolean> {
  try {
    await admin('SELECT 1');
    return true;
  } catch {
    return false;
  }
}

export interface BenchDatabase {
  /** Connection URL of the new database, for `redrive serve --storage`. */
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** CREATE DATABASE redrive_bench_<pid>_<random>; `drop` removes it WITH (FORCE). */
export async function createDatabase(): Promise<BenchDatabase> {
  const name = `redrive_bench_${process.pid}_${randomBytes(4).toString('hex')}`;
  await admin(`CREATE DATABASE ${name}`);
  let dropping: Promise<void> | undefined;
  const drop = () =>
    (dropping ??= (async () => {
      try {
        await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        forget();
      }
    })());
  const forget = atInterrupt(drop);
  const url = new URL(config.postgresUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), name, drop };
}

/**
 * CPU seconds used so far by every process named `postgres` (the postmaster, its
 * background workers, and one backend per connection), by pid.
 */
export function postgresCpu(): Map<number, number> {
  const out = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== 'postgres') continue;
      out.set(Number(entry), processCpuSeconds(Number(entry)));
    } catch {
      // The process ended while we looked.
    }
  }
  return out;
}

/**
 * Processes of the PostgreSQL server that work for another database than `database`
 * (another engineer's tests, the orchestrator's own maintenance connection): their CPU is
 * not the benchmark's. The postmaster and the server-wide background processes
 * (checkpointer, WAL writer, …) have no database and are counted.
 */
export async function foreignPostgresPids(database: string): Promise<Set<number>> {
  const rows = await admin<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE datname IS NOT NULL AND datname <> $1',
    [database],
  );
  return new Set(rows.map((r) => r.pid));
}

/**
 * CPU the database used between two samples, leaving out `exclude`. A backend started in
 * between counts from zero; one that ended in between is missed (the bench's servers keep
 * theirs open).
 */
export function postgresCpuBetween(
  start: Map<number, number>,
  end: Map<number, number>,
  exclude = new Set<number>(),
): number {
  let total = 0;
  for (const [pid, cpu] of end) if (!exclude.has(pid)) total += cpu - (start.get(pid) ?? 0);
  return total;
}

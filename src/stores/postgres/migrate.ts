import type pg from 'pg';
import { storeMigrations } from '../migration.js';

/** The PostgreSQL store's schema steps, from its migrations/ folder. */
export const postgresMigrations = () => storeMigrations('postgres');

/** Any fixed number: the advisory lock every Redrive node takes to migrate. */
const MIGRATION_LOCK = 0x7265_6472;

/**
 * Brings the schema up to date (or up to version `upTo`) in one transaction; the table
 * redrive_migrations records each version applied, so no step runs twice. Several nodes
 * starting at once queue on the transaction-scoped advisory lock: the first migrates,
 * the others then find nothing left to do. DDL is transactional in PostgreSQL, so a
 * failed step leaves the database as it was. Queues from before regions move into
 * `defaultRegion`.
 */
export async function migrate(client: pg.ClientBase, defaultRegion: string, upTo?: number): Promise<number> {
  const steps = postgresMigrations();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await client.query(`CREATE TABLE IF NOT EXISTS redrive_migrations (
      version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`);
    const { rows } = await client.query<{ v: number | null }>('SELECT max(version) AS v FROM redrive_migrations');
    const from = rows[0]!.v ?? 0;
    if (from > steps.length)
      throw new Error(`database schema version ${from} is newer than this Redrive (${steps.length})`);
    const to = Math.min(upTo ?? steps.length, steps.length);
    for (let v = from; v < to; v++) {
      await client.query(steps[v]!.sql(defaultRegion));
      await client.query('INSERT INTO redrive_migrations (version) VALUES ($1)', [v + 1]);
    }
    await client.query('COMMIT');
    return Math.max(to - from, 0);
  } catch (e) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw e;
  }
}

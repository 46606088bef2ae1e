import type Database from 'better-sqlite3';
import { storeMigrations } from '../migration.js';

/** The SQLite store's schema steps, from its migrations/ folder. */
export const sqliteMigrations = () => storeMigrations('sqlite');

/**
 * Brings the schema up to date (or up to version `upTo`), one transaction per step;
 * PRAGMA user_version records where a database stands, so no step runs twice. A
 * database from a newer Redrive is refused rather than opened: this code would misread
 * what it does not know. Queues from before regions move into `defaultRegion`.
 */
export function migrate(db: Database.Database, path: string, defaultRegion: string, upTo?: number): number {
  const steps = sqliteMigrations();
  const from = db.pragma('user_version', { simple: true }) as number;
  if (from > steps.length) {
    throw new Error(
      `the database ${path} has schema version ${from}, newer than this Redrive understands (${steps.length}): upgrade Redrive, or restore a backup made by this version`,
    );
  }
  const to = Math.min(upTo ?? steps.length, steps.length);
  for (let v = from; v < to; v++) {
    db.transaction(() => {
      db.exec(steps[v]!.sql(defaultRegion));
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
  return Math.max(to - from, 0);
}

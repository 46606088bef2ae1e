import type Database from 'better-sqlite3';
import { migrationSql } from '../migration.js';
import { migrations } from './migrations.js';

/**
 * Brings the schema up to date, one transaction per step; PRAGMA user_version records
 * where a database stands. A database from a newer Redrive is refused rather than
 * opened: this code would misread what it does not know. Queues from before regions
 * move into `defaultRegion`.
 */
export function migrate(db: Database.Database, path: string, defaultRegion: string): number {
  const from = db.pragma('user_version', { simple: true }) as number;
  if (from > migrations.length) {
    throw new Error(
      `the database ${path} has schema version ${from}, newer than this Redrive understands (${migrations.length}): upgrade Redrive, or restore a backup made by this version`,
    );
  }
  for (let v = from; v < migrations.length; v++) {
    db.transaction(() => {
      db.exec(migrationSql(migrations[v]!, defaultRegion));
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
  return migrations.length - from;
}

import type BetterSqlite3 from 'better-sqlite3';
import { createRequire } from 'node:module';

/**
 * Which build of better-sqlite3 this Node runs. better-sqlite3 13 is a Node-API 10 module
 * with prebuilt binaries in its package (no compiler, no install script), and the fix for
 * nodejs/node#65446: version 12, built against the headers of Node 24.19 or later, can abort
 * the process when garbage collection frees a statement. But Node-API 10 exists only from
 * Node 22.14, and 13 crashes on an older Node instead of refusing to load. So a Node with
 * Node-API 10 loads 13 (installed under the alias `better-sqlite3-napi`), and Node 20 and
 * early 22 load 12 (an optional dependency, compiled when it is installed).
 */
const SQLITE_DRIVER = Number(process.versions.napi) >= 10 ? 'better-sqlite3-napi' : 'better-sqlite3';

export type Database = BetterSqlite3.Database;
export type Statement = BetterSqlite3.Statement;

let loaded: typeof BetterSqlite3 | undefined;

/** SQLite cannot run on this install: one line saying what to do, which `redrive serve` prints as it is. */
export class SqliteUnavailableError extends Error {
  override name = 'SqliteUnavailableError';
}

/** better-sqlite3's Database class for this Node, loaded on first use (a PostgreSQL-only server never needs it). */
function driver(): typeof BetterSqlite3 {
  if (loaded) return loaded;
  try {
    const Driver = createRequire(import.meta.url)(SQLITE_DRIVER) as typeof BetterSqlite3;
    // better-sqlite3 loads its native addon in the first `new Database()`, not in require():
    // an install whose build is missing only fails here.
    new Driver(':memory:').close();
    loaded = Driver;
    return loaded;
  } catch (err) {
    // The bindings module's message lists every path it tried, one a line: keep its first line.
    const why = (err instanceof Error ? err.message.split('\n')[0]! : String(err)).replace(/\. Tried:$/, '');
    throw new SqliteUnavailableError(
      SQLITE_DRIVER === 'better-sqlite3'
        ? `SQLite is not available on Node ${process.version}: better-sqlite3 12 did not load (${why}). On Node 20 and on Node 22 before 22.14 it is built from source when Redrive is installed: reinstall with its install script allowed (npm install --allow-scripts=better-sqlite3) where g++, make and python3 are installed, or run Redrive on Node 22.14 or later, which uses a prebuilt better-sqlite3.`
        : `SQLite is not available on Node ${process.version}: better-sqlite3 13 did not load (${why}). Reinstall Redrive (npm install) so that its better-sqlite3-napi dependency is present.`,
    );
  }
}

/** Opens (or creates) an SQLite database with the better-sqlite3 build that suits this Node. */
export function openDatabase(path: string, options?: BetterSqlite3.Options): Database {
  const Driver = driver();
  return new Driver(path, options);
}

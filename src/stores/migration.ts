import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isRegionName } from '../engine/kernel/addressing.js';

/**
 * One step of a SQL store's schema: the file `migrations/NNNNNN.sql` of the store's
 * folder moves a database from version NNNNNN - 1 to NNNNNN. Released files are never
 * edited; a change to the schema is a new file with the next number.
 */
export interface Migration {
  version: number;
  /** The file's path, for error messages. */
  path: string;
  /** The step's SQL for a store whose default region is `defaultRegion`. */
  sql(defaultRegion: string): string;
}

/**
 * Where a step names the store's default region (the server's `--region` when the step
 * runs), into which the queues that existed before regions move (docs/upgrading.md). It
 * is psql's syntax for a quoted variable, so a file also runs as is in
 * `psql -v default_region=us-east-1`.
 */
const DEFAULT_REGION = ":'default_region'";

const FILE = /^(\d{6})\.sql$/;

const loaded = new Map<string, readonly Migration[]>();

/**
 * The steps of a store, in order. The files ship as they are in the source tree
 * (package.json `files`), as the console's static files do: this module runs as
 * dist/src/stores/migration.js, three levels below the root that holds src/.
 */
export function storeMigrations(store: 'sqlite' | 'postgres'): readonly Migration[] {
  const known = loaded.get(store);
  if (known) return known;
  const steps = readMigrations(fileURLToPath(new URL(`../../../src/stores/${store}/migrations/`, import.meta.url)));
  loaded.set(store, steps);
  return steps;
}

/** The steps in a folder of numbered .sql files. */
export function readMigrations(dir: string): Migration[] {
  let names: string[];
  try {
    names = readdirSync(dir)
      .filter((f) => f.endsWith('.sql'))
      .sort();
  } catch (e) {
    throw new Error(`the store's migrations are missing (${dir}): ${(e as Error).message}. Reinstall Redrive.`);
  }
  const steps = names.map((name, i): Migration => {
    const version = Number(FILE.exec(name)?.[1]);
    if (version !== i + 1)
      throw new Error(
        `${join(dir, name)}: expected ${String(i + 1).padStart(6, '0')}.sql, the steps are numbered 1, 2, 3 ... without gaps`,
      );
    const path = join(dir, name);
    const text = readFileSync(path, 'utf8');
    return {
      version,
      path,
      sql: (defaultRegion) => {
        if (!text.includes(DEFAULT_REGION)) return text;
        if (!isRegionName(defaultRegion)) throw new Error(`invalid default region ${JSON.stringify(defaultRegion)}`);
        return text.replaceAll(DEFAULT_REGION, sqlText(defaultRegion));
      },
    };
  });
  if (steps.length === 0)
    throw new Error(`the store's migrations are missing: no .sql file in ${dir}. Reinstall Redrive.`);
  return steps;
}

/** A string literal of SQL (both stores quote alike). */
function sqlText(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

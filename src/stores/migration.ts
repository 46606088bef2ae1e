import { isRegionName } from '../engine/queues/addressing.js';

/**
 * A schema step of either SQL store: SQL, or SQL made from the store's default region
 * (the server's `--region` when the step runs), into which the queues that existed
 * before regions move (docs/upgrading.md).
 */
export type Migration = string | ((defaultRegion: string) => string);

/** The SQL of a step for a store whose default region is `defaultRegion`. */
export function migrationSql(step: Migration, defaultRegion: string): string {
  if (typeof step === 'string') return step;
  if (!isRegionName(defaultRegion)) throw new Error(`invalid default region ${JSON.stringify(defaultRegion)}`);
  return step(defaultRegion);
}

/** A string literal of SQL (both stores quote alike). */
export function sqlText(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

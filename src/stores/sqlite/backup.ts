import { existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { openDatabase } from './driver.js';

export interface BackupResult {
  queues: number;
  messages: number;
  bytes: number;
}

/**
 * Copies the database at `source` into a new file `target`, consistently, while a
 * server keeps writing to it: SQLite's online backup, from a read-only connection of
 * this process. In WAL mode that connection's read transaction sees every commit made
 * before it began (so every acknowledged message) and nothing after, and holds back
 * no writer. The copy is made in one step, so it is one snapshot: in smaller steps a
 * write by the server between two of them would restart the backup, for ever under
 * steady load. It is written to a temporary name, checked, and renamed, so `target`
 * only ever holds a whole copy; the copy is a plain one-file database (rollback
 * journal) that a server given its directory opens like any other.
 */
export async function backupDatabase(source: string, target: string): Promise<BackupResult> {
  if (!existsSync(source)) throw new Error(`${source} does not exist`);
  if (existsSync(target)) throw new Error(`${target} already exists: give the name of a new file`);
  const partial = `${target}.partial-${process.pid}`;
  const db = openDatabase(source, { readonly: true, fileMustExist: true, timeout: 5_000 });
  try {
    await db.backup(partial, { progress: () => 0x7fffffff });
  } catch (e) {
    rmSync(partial, { force: true });
    throw e;
  } finally {
    db.close();
  }
  try {
    const copy = openDatabase(partial);
    try {
      copy.pragma('journal_mode = DELETE');
      const check = copy.pragma('quick_check', { simple: true });
      if (check !== 'ok') throw new Error(`the copy failed its check (${String(check)})`);
      const count = (table: string) => (copy.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
      const result = { queues: count('queues'), messages: count('messages'), bytes: statSync(partial).size };
      copy.close();
      renameSync(partial, target);
      return result;
    } finally {
      if (copy.open) copy.close();
    }
  } catch (e) {
    rmSync(partial, { force: true });
    throw e;
  }
}

import { errors, SqsError } from '../../engine/kernel/errors.js';

/** SQLite's result codes that mean the storage itself failed, with what to tell the operator. */
const reasons: Record<string, string> = {
  SQLITE_FULL: 'the disk holding the data directory is full',
  SQLITE_READONLY: 'the data directory is read-only',
  SQLITE_CANTOPEN: 'the database file cannot be opened',
  SQLITE_IOERR: 'the data directory has an I/O error',
  SQLITE_NOMEM: 'the server is out of memory',
  SQLITE_BUSY: 'the database is locked by another process',
};

/** The engine's storage-unavailable error for a SQLite failure; anything else as it is. */
export function sqliteStorageError(e: unknown): unknown {
  if (e instanceof SqsError || !(e instanceof Error)) return e;
  const code = String((e as { code?: unknown }).code ?? '');
  // Extended codes (SQLITE_IOERR_WRITE, SQLITE_READONLY_DBMOVED, ...) by their primary code.
  const reason = reasons[code] ?? reasons[code.replace(/^(SQLITE_[A-Z]+)_.*$/, '$1')];
  return reason ? errors.storageUnavailable(reason, code) : e;
}

const uid = process.getuid?.() ?? '?';
/** What to do when the database file cannot be opened for a reason of this code (SQLite's or Node's). */
const openAdvice: Record<string, string> = {
  SQLITE_NOTADB: 'it is not a SQLite database: move it away, or use another data directory',
  SQLITE_CORRUPT: 'the database is damaged: restore a backup (docs/backup.md), or use another data directory',
  SQLITE_READONLY: `it is read-only: make the file, its -wal and -shm files and its directory writable by the user running Redrive (uid ${uid})`,
  SQLITE_CANTOPEN: `it cannot be opened: make the directory readable and writable by the user running Redrive (uid ${uid})`,
  SQLITE_PERM: `permission denied: make the directory and its files readable and writable by the user running Redrive (uid ${uid})`,
  EACCES: `permission denied: make the directory and its files readable and writable by the user running Redrive (uid ${uid})`,
  EPERM: `permission denied: make the directory and its files readable and writable by the user running Redrive (uid ${uid})`,
  ENOTDIR: 'a part of the path is a file, not a directory: give a directory',
  EEXIST: 'a part of the path is a file, not a directory: give a directory',
};

/**
 * The error of a database file that cannot be opened at start: one line naming the file,
 * the cause and what to do, instead of SQLite's bare `file is not a database`.
 */
export function sqliteOpenError(path: string, e: unknown): unknown {
  const code = String((e as { code?: unknown })?.code ?? '');
  const advice = openAdvice[code] ?? openAdvice[code.replace(/^(SQLITE_[A-Z]+)_.*$/, '$1')];
  if (!advice) return e;
  return Object.assign(new Error(`${path}: ${advice} (${(e as Error).message})`), { code });
}

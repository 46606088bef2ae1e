import { errors, SqsError } from '../../engine/errors.js';

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

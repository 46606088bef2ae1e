import { SqsError, sqsError } from '../engine/errors.js';

/**
 * Failures of the storage itself (a full disk, a read-only or failing data directory, a
 * database that is shutting down) become a 503 ServiceUnavailable that names the cause,
 * instead of an anonymous InternalFailure: the request can succeed once the operator has
 * made room, and SDKs retry 503s with back-off.
 */
const sqlite: Record<string, string> = {
  SQLITE_FULL: 'the disk holding the data directory is full',
  SQLITE_READONLY: 'the data directory is read-only',
  SQLITE_CANTOPEN: 'the database file cannot be opened',
  SQLITE_IOERR: 'the data directory has an I/O error',
  SQLITE_NOMEM: 'the server is out of memory',
  SQLITE_BUSY: 'the database is locked by another process',
};

// PostgreSQL SQLSTATEs (53: insufficient resources; 25006: read-only; 57P: shutdown; 08: connection),
// and the socket error of a database server that is down.
const postgres: Record<string, string> = {
  '53100': 'the database server’s disk is full',
  '53200': 'the database server is out of memory',
  '53300': 'the database server has too many connections',
  '25006': 'the database is read-only',
  '57P01': 'the database server is shutting down',
  '57P03': 'the database server is not accepting connections yet',
  '08000': 'the connection to the database server failed',
  '08001': 'the connection to the database server failed',
  '08003': 'the connection to the database server failed',
  '08006': 'the connection to the database server failed',
  ECONNREFUSED: 'the database server cannot be reached',
};

export function storageError(e: unknown): SqsError | undefined {
  if (e instanceof SqsError || !(e instanceof Error)) return undefined;
  const code = String((e as { code?: unknown }).code ?? '');
  // SQLite extended codes (SQLITE_IOERR_WRITE, SQLITE_READONLY_DBMOVED, ...) by their primary code.
  const reason = sqlite[code] ?? sqlite[code.replace(/^(SQLITE_[A-Z]+)_.*$/, '$1')] ?? postgres[code];
  if (!reason) return undefined;
  return sqsError('ServiceUnavailable', `Storage unavailable: ${reason} (${code}). Try again later.`);
}

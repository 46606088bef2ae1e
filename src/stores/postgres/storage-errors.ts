import { errors, SqsError } from '../../engine/kernel/errors.js';

/**
 * PostgreSQL SQLSTATEs that mean the database itself failed (53: insufficient resources;
 * 25006: read-only; 57P: shutdown; 08: connection), and the socket error of a database
 * server that is down.
 */
const reasons: Record<string, string> = {
  '53100': 'the database server’s disk is full',
  '53200': 'the database server is out of memory',
  '53300': 'the database server has too many connections',
  '25006': 'the database is read-only',
  '57P01': 'the database server is shutting down',
  '57P03': 'the database server is not accepting connections yet',
  '3D000': 'the database does not exist',
  '08000': 'the connection to the database server failed',
  '08001': 'the connection to the database server failed',
  '08003': 'the connection to the database server failed',
  '08006': 'the connection to the database server failed',
  ECONNREFUSED: 'the database server cannot be reached',
  ECONNRESET: 'the connection to the database server failed',
};

/**
 * node-postgres's own failures carry no code, only a message: a timeout (the URL's
 * query_timeout_ms or connect_timeout_ms) or a connection that ended under a query.
 */
const byMessage: [RegExp, string, string][] = [
  [/^Query read timeout$/, 'the database did not answer within query_timeout_ms', 'ETIMEDOUT'],
  [/^timeout exceeded when trying to connect$/, 'no database connection within connect_timeout_ms', 'ETIMEDOUT'],
  // pg-pool's words when a new connection's connect_timeout_ms ran out (a stalled server).
  [
    /^Connection terminated due to connection timeout$/,
    'no database connection within connect_timeout_ms',
    'ETIMEDOUT',
  ],
  [/^Connection terminated/, 'the connection to the database server failed', '08006'],
];

/** The engine's storage-unavailable error for a PostgreSQL failure; anything else as it is. */
export function postgresStorageError(e: unknown): unknown {
  if (e instanceof SqsError || !(e instanceof Error)) return e;
  const code = String((e as { code?: unknown }).code ?? '');
  const reason = reasons[code];
  if (reason) return errors.storageUnavailable(reason, code);
  const known = byMessage.find(([pattern]) => pattern.test(e.message));
  return known ? errors.storageUnavailable(known[1], known[2]) : e;
}

/**
 * What a PostgreSQL failure tells the client (src/stores/postgres/storage-errors.ts): the
 * reason names the setting that ran out. A new connection's connect_timeout_ms running
 * out (pg-pool ends it: "Connection terminated due to connection timeout", as under a
 * stalled server) is a connect timeout, not a connection that failed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { postgresStorageError } from '../../src/stores/postgres/storage-errors.js';

const said = (e: Error) => (postgresStorageError(e) as Error).message;

test("node-postgres's own failures get the reason of the timeout that ran out", () => {
  assert.equal(
    said(new Error('Connection terminated due to connection timeout')),
    'Storage unavailable: no database connection within connect_timeout_ms (ETIMEDOUT). Try again later.',
  );
  assert.equal(
    said(new Error('timeout exceeded when trying to connect')),
    'Storage unavailable: no database connection within connect_timeout_ms (ETIMEDOUT). Try again later.',
  );
  assert.equal(
    said(new Error('Query read timeout')),
    'Storage unavailable: the database did not answer within query_timeout_ms (ETIMEDOUT). Try again later.',
  );
  assert.equal(
    said(new Error('Connection terminated unexpectedly')),
    'Storage unavailable: the connection to the database server failed (08006). Try again later.',
  );
});

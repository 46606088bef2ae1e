/**
 * Upgrading to regions: a database from before them (schema one step older) keeps its
 * queues, with their ids and messages, in the default region the store is opened with
 * (the server's --region), on both SQL stores; ids of deleted queues stay unused.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import pg from 'pg';
import { migrationSql, type Migration } from '../../src/stores/migration.js';
import { migrations as pgMigrations } from '../../src/stores/postgres/migrations.js';
import { PostgresStore } from '../../src/stores/postgres/store.js';
import { migrations as sqliteMigrations } from '../../src/stores/sqlite/migrations.js';
import { openDatabase } from '../../src/stores/sqlite/driver.js';
import { SqliteStore } from '../../src/stores/sqlite/store.js';
import type { Store } from '../../src/engine/store/store.js';
import { createTestDatabase, type TestDatabase } from '../support/postgres.js';
import { makeQueue, newMessage, tempFile } from './harness.js';

const OLD_ROW = `INSERT INTO queues (account_id, name, fifo, attributes, tags, created_at, modified_at) VALUES
  ('000000000000', 'kept', 0, '{"DelaySeconds":"0"}', '{}', 1, 1), ('000000000000', 'deleted', 0, '{}', '{}', 1, 1)`;

/** How many steps come before the regions step: the schema a database from before regions has. */
function stepsBeforeRegions(steps: Migration[]): number {
  const i = steps.findIndex((m) => migrationSql(m, 'x').includes('Regions (docs/regions.md)'));
  assert.ok(i > 0, 'the regions step is found');
  return i;
}

async function checkUpgraded(store: Store): Promise<void> {
  const kept = await store.queues.get({ accountId: '000000000000', region: 'eu-central-1', name: 'kept' });
  assert.ok(kept, 'the old queue is in the default region');
  assert.equal(kept.id, 1);
  assert.equal(await store.queues.get({ accountId: '000000000000', region: 'us-east-1', name: 'kept' }), undefined);
  assert.equal((await store.messages.count(kept.id, 10)).visible, 1, 'its message is still there');
  const twin = await makeQueue(store, { name: 'kept', region: 'us-east-1' });
  assert.ok(twin.id > 2, `a new queue gets a fresh id, never a deleted queue's (got ${twin.id})`);
}

test('SQLite: queues from before regions move into the default region the store opens with', async () => {
  const path = tempFile('redrive.db');
  const db = openDatabase(path);
  const before = stepsBeforeRegions(sqliteMigrations);
  for (let v = 0; v < before; v++) db.exec(migrationSql(sqliteMigrations[v]!, 'unused'));
  db.pragma(`user_version = ${before}`);
  db.exec(OLD_ROW);
  db.exec(`INSERT INTO messages (queue_id, message_id, body, md5_body, sender_id, sent_at, visible_at)
    VALUES (1, 'm1', 'hello', 'x', 's', 1, 1)`);
  db.exec('DELETE FROM queues WHERE id = 2');
  db.close();
  const store = new SqliteStore({ path, defaultRegion: 'eu-central-1' });
  try {
    await checkUpgraded(store);
  } finally {
    await store.close();
  }
});

let database: TestDatabase | undefined;
after(async () => database?.drop());

test('PostgreSQL: queues from before regions move into the default region the store opens with', async () => {
  database = await createTestDatabase();
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    await client.query('CREATE TABLE redrive_migrations (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())');
    const before = stepsBeforeRegions(pgMigrations);
    for (let v = 0; v < before; v++) {
      await client.query(migrationSql(pgMigrations[v]!, 'unused'));
      await client.query('INSERT INTO redrive_migrations (version) VALUES ($1)', [v + 1]);
    }
    await client.query(OLD_ROW.replace(/, 0, /g, ', false, '));
    await client.query(`INSERT INTO messages (queue_id, message_id, body, md5_body, sender_id, sent_at, visible_at)
      VALUES (1, 'm1', 'hello', 'x', 's', 1, 1)`);
    await client.query('DELETE FROM queues WHERE id = 2');
  } finally {
    await client.end();
  }
  const store = await PostgresStore.open({ url: database.url, defaultRegion: 'eu-central-1' });
  try {
    await checkUpgraded(store);
  } finally {
    await store.close();
  }
});

/**
 * Upgrading to regions: a database from before them (schema one step older) keeps its
 * queues, with their ids and messages, in the default region the store is opened with
 * (the server's --region), on both SQL stores; ids of deleted queues stay unused.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import pg from 'pg';
import type { Migration } from '../../src/stores/migration.js';
import { migrate as migratePostgres, postgresMigrations } from '../../src/stores/postgres/migrate.js';
import { PostgresStore } from '../../src/stores/postgres/store.js';
import { migrate as migrateSqlite, sqliteMigrations } from '../../src/stores/sqlite/migrate.js';
import { openDatabase } from '../../src/stores/sqlite/driver.js';
import { SqliteStore } from '../../src/stores/sqlite/store.js';
import type { Store } from '../../src/engine/store/store.js';
import { createTestDatabase, type TestDatabase } from '../support/postgres.js';
import { makeQueue, tempFile } from './harness.js';
import { messageCounts } from '../../src/engine/store/messages.js';

const OLD_ROW = `INSERT INTO queues (account_id, name, fifo, attributes, tags, created_at, modified_at) VALUES
  ('000000000000', 'kept', 0, '{"DelaySeconds":"0"}', '{}', 1, 1), ('000000000000', 'deleted', 0, '{}', '{}', 1, 1)`;

/** How many steps come before the regions step: the schema a database from before regions has. */
function stepsBeforeRegions(steps: readonly Migration[]): number {
  const i = steps.findIndex((m) => m.sql('us-east-1').includes('Regions (docs/regions.md)'));
  assert.ok(i > 0, 'the regions step is found');
  return i;
}

async function checkUpgraded(store: Store): Promise<void> {
  const kept = await store.queues.get({ accountId: '000000000000', region: 'eu-central-1', name: 'kept' });
  assert.ok(kept, 'the old queue is in the default region');
  assert.equal(kept.id, 1);
  assert.equal(await store.queues.get({ accountId: '000000000000', region: 'us-east-1', name: 'kept' }), undefined);
  assert.equal((await messageCounts(store.messages, kept.id, 10)).visible, 1, 'its message is still there');
  const twin = await makeQueue(store, { name: 'kept', region: 'us-east-1' });
  assert.ok(twin.id > 2, `a new queue gets a fresh id, never a deleted queue's (got ${twin.id})`);
}

test('SQLite: queues from before regions move into the default region the store opens with', async () => {
  const path = tempFile('redrive.db');
  const db = openDatabase(path);
  migrateSqlite(db, path, 'us-east-1', stepsBeforeRegions(sqliteMigrations()));
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
    await migratePostgres(client, 'us-east-1', stepsBeforeRegions(postgresMigrations()));
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

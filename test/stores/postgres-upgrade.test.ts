/**
 * A PostgreSQL database made by an earlier release opens under this one with nothing lost
 * (upgrade-cases.ts). The fixture (made by make-postgres-fixture.mjs with the build of
 * 5f09973, schema 14) is a plain SQL dump, loaded into a fresh database for each case.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, test } from 'node:test';
import pg from 'pg';
import { postgresMigrations } from '../../src/stores/postgres/migrate.js';
import { PostgresStore } from '../../src/stores/postgres/store.js';
import { createTestDatabase, type TestDatabase } from '../support/postgres.js';
import { upgradeCases, type Snapshot } from './upgrade-cases.js';

const fixture = (name: string) => new URL(`../../../test/stores/fixtures/${name}`, import.meta.url);
const snapshot = JSON.parse(readFileSync(fixture('postgres-5f09973.json'), 'utf8')) as Snapshot;
// psql's own commands (\restrict) are not SQL; the rest runs as one simple query.
const dump = readFileSync(fixture('postgres-5f09973.sql'), 'utf8')
  .split('\n')
  .filter((l) => !l.startsWith('\\'))
  .join('\n');

const databases: TestDatabase[] = [];
after(() => Promise.all(databases.map((db) => db.drop())));

async function loadFixture(): Promise<string> {
  const db = await createTestDatabase();
  databases.push(db);
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  try {
    await c.query(dump);
  } finally {
    await c.end();
  }
  return db.url;
}

const openUpgraded = async () => PostgresStore.open({ url: await loadFixture(), defaultRegion: 'us-east-1' });

test('the database of 5f09973 is migrated to the latest schema: one delivery row per message, sent rows kept', async () => {
  const url = await loadFixture();
  const store = await PostgresStore.open({ url, defaultRegion: 'us-east-1' });
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await store.maintenance.ready();
    const { rows } = await c.query<{ version: number }>('SELECT max(version)::int AS version FROM redrive_migrations');
    assert.equal(rows[0]!.version, postgresMigrations().length);
    const stored = Object.values(snapshot.queues).flatMap((q) => q.messages).length;
    const count = async (sql: string) => (await c.query<{ n: number }>(sql)).rows[0]!.n;
    assert.equal(await count('SELECT count(*)::int AS n FROM messages'), stored);
    assert.equal(await count('SELECT count(*)::int AS n FROM deliveries'), stored);
    assert.equal(
      await count('SELECT count(*)::int AS n FROM deliveries d JOIN messages m USING (seq, queue_id)'),
      stored,
    );
  } finally {
    await c.end();
    await store.close();
  }
});

upgradeCases(snapshot, openUpgraded);

/**
 * A SQLite database made by an earlier release opens under this one with nothing lost
 * (upgrade-cases.ts); the fixture was made by make-sqlite-fixture.mjs with the build of
 * 5f09973, schema 14.
 */
import assert from 'node:assert/strict';
import { copyFileSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { sqliteMigrations } from '../../src/stores/sqlite/migrate.js';
import { SqliteStore } from '../../src/stores/sqlite/store.js';
import { tempFile } from './harness.js';
import { upgradeCases, type Snapshot } from './upgrade-cases.js';

const fixture = (name: string) => new URL(`../../../test/stores/fixtures/${name}`, import.meta.url);
const snapshot = JSON.parse(readFileSync(fixture('sqlite-5f09973.json'), 'utf8')) as Snapshot;

async function openUpgraded(): Promise<SqliteStore> {
  const path = tempFile('redrive.db');
  copyFileSync(fixture('sqlite-5f09973.db'), path);
  return new SqliteStore({ path });
}

test('the database of 5f09973 is migrated to the latest schema', async () => {
  const store = await openUpgraded();
  try {
    await store.maintenance.ready();
    assert.equal(sqliteMigrations().length, 15);
  } finally {
    await store.close();
  }
});

upgradeCases(snapshot, openUpgraded);

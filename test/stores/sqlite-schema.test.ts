/** A SQLite database written by a newer Redrive is refused, as the PostgreSQL store refuses one. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sqliteMigrations } from '../../src/stores/sqlite/migrate.js';
import { SqliteStore } from '../../src/stores/sqlite/store.js';
import { tempFile } from './harness.js';
import { openDatabase } from '../../src/stores/sqlite/driver.js';

test('a database with a newer schema than this code is refused, naming the file, and left as it was', async () => {
  const latest = sqliteMigrations().length;
  const path = tempFile('redrive.db');
  await new SqliteStore({ path }).close();
  const db = openDatabase(path);
  db.pragma(`user_version = ${latest + 1}`);
  db.close();
  assert.throws(
    () => new SqliteStore({ path }),
    (e: Error) => {
      assert.match(
        e.message,
        new RegExp(
          `${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} has schema version ${latest + 1}, newer than this Redrive understands \\(${latest}\\)`,
        ),
      );
      return true;
    },
  );
  const after = openDatabase(path, { readonly: true });
  assert.equal(after.pragma('user_version', { simple: true }), latest + 1, 'nothing migrated down');
  after.close();
});

test('the current schema opens again without migrating', async () => {
  const path = tempFile('redrive.db');
  await new SqliteStore({ path }).close();
  const store = new SqliteStore({ path });
  assert.equal(store.kind, 'sqlite');
  await store.close();
});

/** A SQLite database written by a newer Redrive is refused, as the PostgreSQL store refuses one. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { migrations } from '../../src/stores/sqlite/migrations.js';
import { SqliteStore } from '../../src/stores/sqlite/store.js';
import { tempFile } from './harness.js';

test('a database with a newer schema than this code is refused, naming the file, and left as it was', async () => {
  const path = tempFile('redrive.db');
  await new SqliteStore({ path }).close();
  const db = new Database(path);
  db.pragma(`user_version = ${migrations.length + 1}`);
  db.close();
  assert.throws(() => new SqliteStore({ path }), (e: Error) => {
    assert.match(e.message, new RegExp(`${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} has schema version ${migrations.length + 1}, newer than this Redrive understands \\(${migrations.length}\\)`));
    return true;
  });
  const after = new Database(path, { readonly: true });
  assert.equal(after.pragma('user_version', { simple: true }), migrations.length + 1, 'nothing migrated down');
  after.close();
});

test('the current schema opens again without migrating', async () => {
  const path = tempFile('redrive.db');
  await new SqliteStore({ path }).close();
  const store = new SqliteStore({ path });
  assert.equal(store.kind, 'sqlite');
  await store.close();
});

test('upgrading gives every existing queue a depth row that counts its messages', async () => {
  const path = tempFile('redrive.db');
  await new SqliteStore({ path }).close();
  // A queue with no depth row, as before that step; then the step runs again on it. (The
  // step is found by its text: later steps cannot all run twice, so the version is kept.)
  const db = new Database(path);
  const step = migrations.findIndex((m) => m.includes('Every queue gets a depth row'));
  assert.ok(step > 0);
  db.exec(`INSERT INTO queues (account_id, name, fifo, attributes, tags, created_at, modified_at) VALUES ('000000000000', 'old', 0, '{}', '{}', 1, 1)`);
  const id = Number(db.prepare("SELECT id FROM queues WHERE name = 'old'").pluck().get());
  const insert = db.prepare(`INSERT INTO messages (queue_id, message_id, body, md5_body, sender_id, sent_at, visible_at) VALUES (?, ?, 'hello', 'x', 's', 1, ?)`);
  db.prepare('DELETE FROM queue_depth WHERE queue_id = ?').run(id);
  for (let i = 0; i < 3; i++) insert.run(id, `m${i}`, i === 2 ? 9_999_999 : 1);
  db.prepare('DELETE FROM queue_depth WHERE queue_id = ?').run(id);
  db.exec(migrations[step]!);
  db.close();
  const store = new SqliteStore({ path });
  assert.deepEqual((await store.messages.depths([id], 1000)).get(id), { visible: 2, inflight: 0, delayed: 1, oldestSentAt: 1, groupsInflight: 0 });
  await store.close();
});

/**
 * SQLite plans a LIMIT that is a bare parameter with the value bound to it, so each new binding expires the
 * statement and its next run is parsed and planned again (see BOUND_LIMIT in rows.ts).
 * Nothing observable from better-sqlite3 shows a re-preparation, only its cost, so this
 * guards the SQL itself: every limit taken from a parameter goes through BOUND_LIMIT.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { BOUND_LIMIT } from '../../src/stores/sqlite/sql.js';
import { openDatabase } from '../../src/stores/sqlite/driver.js';

// Compiled to dist/test/stores: the sources are three levels up.
const dir = new URL('../../../src/stores/sqlite/', import.meta.url);

test('no SQLite statement binds its LIMIT directly', () => {
  const files = readdirSync(dir).filter((f) => f.endsWith('.ts'));
  assert.ok(files.length >= 5, `found the store's sources in ${dir.pathname}`);
  for (const f of files) {
    const source = readFileSync(new URL(f, dir), 'utf8');
    assert.doesNotMatch(source, /LIMIT\s+\?/i, `${f} writes LIMIT ?; use BOUND_LIMIT`);
  }
});

test('BOUND_LIMIT limits by the value bound at each run', () => {
  const db = openDatabase(':memory:');
  try {
    db.exec('CREATE TABLE t (n INTEGER PRIMARY KEY); INSERT INTO t VALUES (1), (2), (3), (4), (5)');
    const first = db.prepare(`SELECT n FROM t ORDER BY n ${BOUND_LIMIT}`).pluck();
    assert.deepEqual(first.all(2), [1, 2]);
    assert.deepEqual(first.all(4), [1, 2, 3, 4]);
    assert.deepEqual(first.all(0), []);
  } finally {
    db.close();
  }
});

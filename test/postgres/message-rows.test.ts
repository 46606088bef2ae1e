/**
 * A PostgreSQL message is two rows (migrations/000015.sql): a receive, a visibility change
 * and a release rewrite the delivery row only, never the row that holds the body; a
 * delete removes both. A tuple rewritten by an UPDATE has a new version (a new ctid and
 * xmin), so the sent rows' versions must not change.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import pg from 'pg';
import { PostgresStore } from '../../src/stores/postgres/store.js';
import { createTestDatabase, type TestDatabase } from '../support/postgres.js';
import { makeQueue, newMessage, receiveRequest } from '../stores/harness.js';

const databases: TestDatabase[] = [];
after(() => Promise.all(databases.map((db) => db.drop())));

test('receives and visibility changes rewrite the delivery rows, never the sent rows; deletes remove both', async () => {
  const db = await createTestDatabase();
  databases.push(db);
  const store = await PostgresStore.open({ url: db.url });
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  try {
    const T = 1_700_000_000_000;
    const q = await makeQueue(store);
    await store.messages.send(
      q.id,
      Array.from({ length: 10 }, () => newMessage(T, { body: 'b'.repeat(3000) })),
    );
    const versions = async (table: string) =>
      (
        await c.query<{ v: string }>(`SELECT seq || ':' || ctid || ':' || xmin AS v FROM ${table} ORDER BY seq`)
      ).rows.map((r) => r.v);
    const [sent, delivered] = [await versions('messages'), await versions('deliveries')];
    const got = await store.messages.receive(q.id, receiveRequest(T + 1, { max: 10 }));
    assert.equal(got.messages.length, 10);
    assert.ok(got.messages.every((m) => m.body === 'b'.repeat(3000) && m.receiveCount === 1));
    const outcomes = await store.messages.changeVisibility(
      q.id,
      got.messages.map((m) => ({
        seq: m.seq,
        token: m.receiptToken!,
        visibilityTimeoutMs: 0,
        maxSinceReceiveMs: 43_200_000,
        requireCurrent: true,
      })),
      T + 2,
    );
    assert.deepEqual(
      outcomes,
      got.messages.map(() => 'ok'),
    );
    assert.deepEqual(await versions('messages'), sent, 'no sent row was rewritten');
    const after = await versions('deliveries');
    assert.equal(after.filter((v, i) => v !== delivered[i]).length, 10, 'every delivery row was');
    // A receipt is stored as its 12 bytes.
    const again = await store.messages.receive(q.id, receiveRequest(T + 3, { max: 10 }));
    const { rows } = await c.query<{ n: number }>('SELECT octet_length(receipt) AS n FROM deliveries');
    assert.deepEqual([...new Set(rows.map((r) => r.n))], [12]);
    await store.messages.delete(
      q.id,
      again.messages.map((m) => ({ seq: m.seq, token: m.receiptToken! })),
      { now: T + 4, requireCurrent: false },
    );
    const count = async (table: string) =>
      (await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]!.n;
    assert.deepEqual([await count('messages'), await count('deliveries')], [0, 0]);
  } finally {
    await c.end();
    await store.close();
  }
});

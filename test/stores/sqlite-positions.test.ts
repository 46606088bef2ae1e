/**
 * The SQLite store hands out message positions from memory (message-rows.ts), and a
 * receipt handle names a position, so no position may ever be handed out twice: not
 * after a restart that follows the deletion of the newest message, and not after a
 * transaction that moved the persisted mark rolled back. Receipts are stored as blobs
 * and read back as the very token they were made from.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newReceiptToken } from '../../src/engine/messages/receipt.js';
import { openDatabase } from '../../src/stores/sqlite/driver.js';
import { GroupCommit } from '../../src/stores/sqlite/group-commit.js';
import { tokenBytes, tokenText } from '../../src/stores/receipt-bytes.js';
import { MessageRows } from '../../src/stores/sqlite/message-rows.js';
import { migrate } from '../../src/stores/sqlite/migrate.js';
import { SqliteStore } from '../../src/stores/sqlite/store.js';
import { makeQueue, newMessage, tempFile } from './harness.js';

const T = 1_700_000_000_000;

test('a restart after the newest message was deleted does not hand its position out again', async () => {
  const path = tempFile('redrive.db');
  let store = new SqliteStore({ path });
  const q = await makeQueue(store);
  const sent = await store.messages.send(q.id, [newMessage(T), newMessage(T), newMessage(T)]);
  const newest = sent.messages[2]!.seq;
  assert.deepEqual(
    await store.messages.delete(q.id, [{ seq: newest, token: 'x' }], { now: T, requireCurrent: false }),
    ['ok'],
  );
  await store.close();
  store = new SqliteStore({ path });
  try {
    const again = await store.messages.send(q.id, [newMessage(T + 1)]);
    assert.ok(again.messages[0]!.seq > newest, `${again.messages[0]!.seq} after ${newest}`);
  } finally {
    await store.close();
  }
});

test('a rolled-back transaction that moved the mark leaves the next one to move it again', async () => {
  const db = openDatabase(':memory:');
  migrate(db, ':memory:', 'us-east-1');
  const rows = new MessageRows(db);
  const commit = new GroupCommit(db, { afterRollback: () => rows.resync() });
  const mark = db.prepare("SELECT value FROM counters WHERE name = 'seq'").pluck();
  const before = mark.get() as number;
  await assert.rejects(
    commit.run(() => {
      rows.insert(1, newMessage(T));
      throw new Error('the write fails after its position was taken');
    }),
    /the write fails/,
  );
  assert.equal(mark.get(), before, 'the mark rolled back with the transaction');
  const seq = await commit.run(() => rows.insert(1, newMessage(T)));
  assert.ok((mark.get() as number) > seq, 'every position handed out is below the persisted mark');
  db.close();
});

test('receipt tokens read back as they were given: SQS tokens in 12 bytes, others as text', () => {
  for (let i = 0; i < 100; i++) {
    const token = newReceiptToken();
    assert.equal(tokenBytes(token).length, 12);
    assert.equal(tokenText(tokenBytes(token)), token);
  }
  for (const token of ['amqp.0123456789abcdef.AAAAAAAAAAAAAAAA', 't', 'twelve-chars', 'héllo wörld', 'x'.repeat(16)])
    assert.equal(tokenText(tokenBytes(token)), token, token);
  assert.equal(tokenText(Buffer.from('pPyUr8084uioT9CK')), 'pPyUr8084uioT9CK', 'an old token migrated as its text');
  assert.equal(tokenText(null), null);
});

/**
 * The SQLite store checkpoints its WAL on a worker thread (checkpointer.ts), so the
 * serving connection never does it inside a commit. Below the serving connection's own
 * fallback threshold, only the worker can have copied pages into the database file.
 */
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { SqliteStore } from '../../src/stores/sqlite/store.js';
import { FALLBACK_CHECKPOINT_PAGES } from '../../src/stores/sqlite/checkpointer.js';
import { makeQueue, newMessage, receiveRequest, tempFile } from './harness.js';

test('the checkpoint thread copies committed pages into the database file while the store serves', async () => {
  const path = tempFile('checkpoint.db');
  const store = new SqliteStore({ path });
  try {
    const queue = await makeQueue(store);
    const sizeBefore = statSync(path).size;
    const now = 1_700_000_000_000;
    // About 200 KiB of messages: some 50 pages, far below the fallback threshold.
    const sent = 800;
    await Promise.all(
      Array.from({ length: sent / 10 }, () =>
        store.messages.send(
          queue.id,
          Array.from({ length: 10 }, () => newMessage(now, { body: 'x'.repeat(256) })),
        ),
      ),
    );
    assert.ok(
      statSync(`${path}-wal`).size < FALLBACK_CHECKPOINT_PAGES * 4096,
      'the serving connection never reached its own threshold',
    );
    // The worker runs every 200 ms; a real thread, so this polls real time, for 5 s at most.
    for (let i = 0; i < 100 && statSync(path).size <= sizeBefore; i++) await sleep(50);
    assert.ok(statSync(path).size > sizeBefore, 'the database file grew: the worker checkpointed');
    const got = await store.messages.receive(queue.id, receiveRequest(now, { max: 10 }));
    assert.equal(got.messages.length, 10, 'the data reads back after the checkpoint');
  } finally {
    await store.close();
  }
  // Closing twice is harmless, and the closed store released its worker (the test ends).
  await store.close();
});

test('after a clean close the WAL is gone: the worker closed its connection before the store did', async () => {
  const path = tempFile('checkpoint-close.db');
  const store = new SqliteStore({ path });
  const queue = await makeQueue(store);
  await store.messages.send(queue.id, [newMessage(1_700_000_000_000)]);
  await store.close();
  // SQLite checkpoints and deletes the WAL when the last connection to the file closes.
  assert.throws(() => statSync(`${path}-wal`), /ENOENT/);
  const reopened = new SqliteStore({ path });
  try {
    const got = await reopened.messages.receive(queue.id, receiveRequest(1_700_000_000_000));
    assert.equal(got.messages.length, 1);
  } finally {
    await reopened.close();
  }
});

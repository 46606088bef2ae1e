import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ActivityCounter } from '../../src/engine/activity/activity-counts.js';
import type { ActivityCounts, ActivityStore } from '../../src/engine/store/activity.js';
import type { QueueRecord } from '../../src/engine/kernel/types.js';

/** A store whose writes finish only when the test says so. */
function slowStore() {
  const stored: ActivityCounts[] = [];
  const pending: (() => void)[] = [];
  const store = {
    add: (rows: readonly ActivityCounts[]) =>
      new Promise<void>((done) =>
        pending.push(() => {
          stored.push(...rows);
          done();
        }),
      ),
  } as unknown as ActivityStore;
  return { store, stored, pending };
}

const clock = { now: () => 120_000, schedule: () => ({ cancel() {} }) };
const queue = { id: 7 } as QueueRecord;

test('a flush that finds nothing new still waits for the flush writing before it', async () => {
  const { store, stored, pending } = slowStore();
  const counter = new ActivityCounter(store, clock);
  counter.sent(queue, 3);
  const sweep = counter.flush(); // takes the row and starts writing
  let readerDone = false;
  const reader = counter.flush().then(() => (readerDone = true));
  await new Promise((r) => setImmediate(r));
  assert.equal(readerDone, false, 'the reader did not go ahead of the write in progress');
  pending.shift()!();
  await Promise.all([sweep, reader]);
  assert.deepEqual(
    stored.map((r) => [r.queueId, r.sent]),
    [[7, 3]],
  );
});

test('a failed flush keeps its rows for the next, which writes them once', async () => {
  let fail = true;
  const stored: ActivityCounts[] = [];
  const store = {
    add: async (rows: readonly ActivityCounts[]) => {
      if (fail) throw new Error('database gone');
      stored.push(...rows);
    },
  } as unknown as ActivityStore;
  const counter = new ActivityCounter(store, clock);
  counter.deleted(queue, 2);
  await assert.rejects(counter.flush(), /database gone/);
  fail = false;
  counter.deleted(queue, 1);
  await counter.flush();
  assert.equal(
    stored.reduce((n, r) => n + r.deleted, 0),
    3,
  );
});

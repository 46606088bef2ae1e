import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { GroupCommit } from '../../src/stores/postgres/group-commit.js';
import { PostgresStore } from '../../src/stores/postgres/store.js';
import { makeQueue, newMessage, receiveRequest, useStore } from '../stores/harness.js';
import { createTestDatabase, type TestDatabase } from '../support/postgres.js';
import { messageCounts } from '../../src/engine/store/messages.js';

/** A run function that records each batch it was given and answers item × 10. */
function recorder(fail?: (items: number[]) => Error | undefined) {
  const batches: number[][] = [];
  let inFlight = 0;
  let most = 0;
  const run = async (items: number[]) => {
    batches.push([...items]);
    inFlight++;
    most = Math.max(most, inFlight);
    await new Promise((resolve) => setTimeout(resolve, 5));
    inFlight--;
    const e = fail?.(items);
    if (e) throw e;
    return items.map((i) => i * 10);
  };
  return { run, batches, most: () => most };
}

const sqlError = (code: string) => Object.assign(new Error(`SQLSTATE ${code}`), { code });

test('writes submitted in one turn share one batch, and each caller gets its own answer', async () => {
  const r = recorder();
  const gc = new GroupCommit(r.run);
  const out = await Promise.all([1, 2, 3, 4, 5].map((i) => gc.submit(i)));
  assert.deepEqual(out, [10, 20, 30, 40, 50]);
  assert.deepEqual(r.batches, [[1, 2, 3, 4, 5]]);
});

test('at most maxInFlight batches run at once; what arrives meanwhile joins the next batch', async () => {
  const r = recorder();
  const gc = new GroupCommit(r.run, 1);
  const first = gc.submit(1);
  await new Promise((resolve) => setImmediate(resolve)); // the first batch is under way
  const rest = [2, 3, 4].map((i) => gc.submit(i));
  assert.deepEqual(await Promise.all([first, ...rest]), [10, 20, 30, 40]);
  assert.deepEqual(r.batches, [[1], [2, 3, 4]]);
  assert.equal(r.most(), 1);
});

test('an error one item can cause (a constraint) fails that item alone: the others are written one by one', async () => {
  const r = recorder((items) => (items.includes(3) ? sqlError('23505') : undefined));
  const gc = new GroupCommit(r.run);
  const out = await Promise.allSettled([1, 2, 3, 4].map((i) => gc.submit(i)));
  assert.deepEqual(
    out.map((o) => o.status),
    ['fulfilled', 'fulfilled', 'rejected', 'fulfilled'],
  );
  assert.deepEqual(
    out.filter((o) => o.status === 'fulfilled').map((o) => (o as PromiseFulfilledResult<number>).value),
    [10, 20, 40],
  );
  assert.deepEqual(r.batches, [[1, 2, 3, 4], [1], [2], [3], [4]]);
});

test('any other error (a lost connection) fails the whole batch without running it again', async () => {
  const r = recorder(() => sqlError('08006'));
  const gc = new GroupCommit(r.run);
  const out = await Promise.allSettled([1, 2, 3].map((i) => gc.submit(i)));
  assert.ok(out.every((o) => o.status === 'rejected' && (o.reason as { code: string }).code === '08006'));
  assert.deepEqual(r.batches, [[1, 2, 3]], 'a batch whose commit may have gone through is not written twice');
});

describe('the PostgreSQL store groups the sends and deletes of one turn', () => {
  let db: TestDatabase;
  const store = useStore(async () => {
    db = await createTestDatabase();
    return PostgresStore.open({ url: db.url });
  });
  after(async () => db.drop());

  test('concurrent sends to two queues are each stored once, counted per queue, and deleted together', async () => {
    const T = 1_700_000_000_000;
    const [a, b] = [await makeQueue(store()), await makeQueue(store())];
    const sends = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        store().messages.send(i % 3 === 0 ? b.id : a.id, [newMessage(T), newMessage(T)]),
      ),
    );
    const seqs = sends.flatMap((s) => s.messages.map((m) => m.seq));
    assert.equal(new Set(seqs).size, 24, 'every message has a position of its own');
    assert.deepEqual(await messageCounts(store().messages, a.id, T), { visible: 16, inflight: 0, delayed: 0 });
    assert.deepEqual(await messageCounts(store().messages, b.id, T), { visible: 8, inflight: 0, delayed: 0 });

    const got = await store().messages.receive(a.id, receiveRequest(T, { max: 10 }));
    const refs = got.messages.map((m) => ({ seq: m.seq, token: m.receiptToken! }));
    const rule = { now: T + 1, requireCurrent: false };
    // Two deletes of the same receipts in one turn: the first finds them, the second finds them gone.
    const [first, second] = await Promise.all([
      store().messages.delete(a.id, refs, rule),
      store().messages.delete(a.id, refs, rule),
    ]);
    assert.deepEqual(
      first,
      refs.map(() => 'ok'),
    );
    assert.deepEqual(
      second,
      refs.map(() => 'gone'),
    );
    // A receipt of queue a used on queue b deletes nothing there.
    assert.deepEqual(await store().messages.delete(b.id, [{ seq: sends[1]!.messages[0]!.seq, token: 'x' }], rule), [
      'gone',
    ]);
    assert.deepEqual(await messageCounts(store().messages, a.id, T + 1), { visible: 6, inflight: 0, delayed: 0 });
    assert.deepEqual(await messageCounts(store().messages, b.id, T + 1), { visible: 8, inflight: 0, delayed: 0 });
  });
});

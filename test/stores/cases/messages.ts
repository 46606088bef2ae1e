import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { makeQueue, newMessage, receiveRequest, useStore, type CaseGroup } from '../harness.js';
import { messageCounts } from '../../../src/engine/store/messages.js';

const T = 1_700_000_000_000;

export const messageCases: CaseGroup = (open) => {
  describe('messages', () => {
    const store = useStore(open);

    test('send assigns increasing positions and keeps every field', async () => {
      const q = await makeQueue(store());
      const { messages: sent } = await store().messages.send(q.id, [
        newMessage(T, { attributes: { a: { DataType: 'String', StringValue: 'x' } }, md5OfAttributes: 'm' }),
        newMessage(T, { groupId: 'g', dedupId: 'd' }),
      ]);
      assert.ok(sent[1]!.seq > sent[0]!.seq);
      const { messages } = await store().messages.receive(q.id, receiveRequest(T));
      assert.equal(messages.length, 2);
      assert.deepEqual(messages[0]!.attributes, { a: { DataType: 'String', StringValue: 'x' } });
      assert.equal(messages[0]!.md5OfAttributes, 'm');
      assert.equal(messages[1]!.groupId, 'g');
      assert.equal(messages[1]!.dedupId, 'd');
    });

    test('receive returns visible messages oldest first, up to max, and hides them', async () => {
      const q = await makeQueue(store());
      await store().messages.send(
        q.id,
        [1, 2, 3].map((i) => newMessage(T + i)),
      );
      const first = await store().messages.receive(q.id, receiveRequest(T + 10, { max: 2, visibilityTimeoutMs: 1000 }));
      assert.deepEqual(
        first.messages.map((m) => m.sentAt),
        [T + 1, T + 2],
      );
      assert.ok(first.messages.every((m) => m.receiveCount === 1 && m.receiptToken && m.firstReceivedAt === T + 10));
      const second = await store().messages.receive(q.id, receiveRequest(T + 10));
      assert.deepEqual(
        second.messages.map((m) => m.sentAt),
        [T + 3],
      );
      const later = await store().messages.receive(q.id, receiveRequest(T + 1010));
      assert.equal(later.messages.length, 2, 'visible again after the timeout');
      assert.ok(later.messages.every((m) => m.receiveCount === 2 && m.firstReceivedAt === T + 10));
    });

    test('a zero visibility timeout never returns one message twice in one receive', async () => {
      const q = await makeQueue(store());
      await store().messages.send(q.id, [newMessage(T), newMessage(T)]);
      const r = await store().messages.receive(q.id, receiveRequest(T, { visibilityTimeoutMs: 0 }));
      assert.equal(r.messages.length, 2);
      assert.equal(new Set(r.messages.map((m) => m.seq)).size, 2);
    });

    test('delayed messages are not received before their time', async () => {
      const q = await makeQueue(store());
      await store().messages.send(q.id, [newMessage(T, { visibleAt: T + 5000 })]);
      assert.equal((await store().messages.receive(q.id, receiveRequest(T + 4999))).messages.length, 0);
      assert.equal(await store().messages.nextVisibleAt(q.id, T), T + 5000);
      assert.equal((await store().messages.receive(q.id, receiveRequest(T + 5000))).messages.length, 1);
    });

    test('a standard receive that finds fewer than it asked for gives the next visible time, read with it', async () => {
      const q = await makeQueue(store());
      const none = await store().messages.receive(q.id, receiveRequest(T));
      assert.deepEqual(none, { messages: [], deadLettered: [], nextVisibleAt: null }, 'nothing ahead: null');
      await store().messages.send(q.id, [
        newMessage(T, { visibleAt: T + 7000 }),
        newMessage(T, { visibleAt: T + 3000 }),
        newMessage(T),
        newMessage(T),
      ]);
      const full = await store().messages.receive(q.id, receiveRequest(T, { max: 1, visibilityTimeoutMs: 1000 }));
      assert.equal(full.messages.length, 1);
      assert.equal(full.nextVisibleAt, undefined, 'a full receive reads no time: more may be ready');
      const short = await store().messages.receive(q.id, receiveRequest(T + 10, { max: 5, visibilityTimeoutMs: 500 }));
      assert.equal(short.messages.length, 1);
      // Its own receipt (T + 510) is due before the first one's (T + 1000) and the delayed ones.
      assert.equal(short.nextVisibleAt, T + 510);
      const empty = await store().messages.receive(q.id, receiveRequest(T + 20));
      assert.equal(empty.messages.length, 0);
      assert.equal(empty.nextVisibleAt, T + 510);
      assert.equal(empty.nextVisibleAt, await store().messages.nextVisibleAt(q.id, T + 20));
      assert.equal((await store().messages.receive(q.id, receiveRequest(T + 1500))).messages.length, 2);
      assert.equal((await store().messages.receive(q.id, receiveRequest(T + 1600))).nextVisibleAt, T + 3000);
    });

    test('messages past the retention cutoff are never received and are swept', async () => {
      const q = await makeQueue(store());
      await store().messages.send(q.id, [newMessage(T), newMessage(T + 100)]);
      const r = await store().messages.receive(q.id, receiveRequest(T + 200, { retentionCutoff: T + 50 }));
      assert.deepEqual(
        r.messages.map((m) => m.sentAt),
        [T + 100],
      );
      assert.equal(await store().maintenance.deleteSentBefore(q.id, T + 50), 1);
      assert.equal((await messageCounts(store().messages, q.id, T + 200)).inflight, 1);
    });

    test('messages past retention at the front of the ready window do not hide the ready ones behind them', async () => {
      const q = await makeQueue(store());
      await store().messages.send(
        q.id,
        Array.from({ length: 70 }, () => newMessage(T, { body: 'expired' })),
      );
      await store().messages.send(q.id, [
        newMessage(T + 100, { body: 'a' }),
        newMessage(T + 100, { body: 'b' }),
        newMessage(T + 100, { body: 'c' }),
      ]);
      const r = await store().messages.receive(q.id, receiveRequest(T + 200, { max: 2, retentionCutoff: T + 50 }));
      assert.deepEqual(
        r.messages.map((m) => m.body),
        ['a', 'b'],
      );
    });

    test('a returning message deep in the ready window still comes before the newer messages ahead of it', async () => {
      const q = await makeQueue(store());
      await store().messages.send(q.id, [newMessage(T, { body: 'old' })]);
      await store().messages.receive(q.id, receiveRequest(T, { visibilityTimeoutMs: 1000 }));
      // 55 newer messages became visible before the old one returns: it is the 56th of a receive of ten's window of 60.
      await store().messages.send(
        q.id,
        Array.from({ length: 55 }, (_, i) => newMessage(T + 500, { body: `new${i}` })),
      );
      const r = await store().messages.receive(q.id, receiveRequest(T + 2000, { max: 10 }));
      assert.deepEqual(
        r.messages.map((m) => m.body),
        ['old', ...Array.from({ length: 9 }, (_, i) => `new${i}`)],
      );
    });

    test('counts distinguish visible, in flight and delayed', async () => {
      const q = await makeQueue(store());
      await store().messages.send(q.id, [newMessage(T), newMessage(T), newMessage(T, { visibleAt: T + 9000 })]);
      await store().messages.receive(q.id, receiveRequest(T, { max: 1 }));
      assert.deepEqual(await messageCounts(store().messages, q.id, T), { visible: 1, inflight: 1, delayed: 1 });
      assert.equal((await store().messages.inflightByGroup(q.id, T)).total, 1);
    });

    test('delete: any receipt deletes on standard queues; only the current unlapsed one on FIFO', async () => {
      const q = await makeQueue(store());
      await store().messages.send(q.id, [newMessage(T)]);
      const a = (await store().messages.receive(q.id, receiveRequest(T, { visibilityTimeoutMs: 0 }))).messages[0]!;
      const b = (await store().messages.receive(q.id, receiveRequest(T + 1, { visibilityTimeoutMs: 1000 })))
        .messages[0]!;
      assert.notEqual(a.receiptToken, b.receiptToken);
      const fifoRule = { now: T + 2, requireCurrent: true };
      assert.deepEqual(await store().messages.delete(q.id, [{ seq: a.seq, token: a.receiptToken! }], fifoRule), [
        'lapsed',
      ]);
      assert.deepEqual(
        await store().messages.delete(q.id, [{ seq: b.seq, token: b.receiptToken! }], {
          now: T + 5000,
          requireCurrent: true,
        }),
        ['lapsed'],
      );
      assert.deepEqual(
        await store().messages.delete(q.id, [{ seq: a.seq, token: a.receiptToken! }], {
          now: T + 2,
          requireCurrent: false,
        }),
        ['ok'],
      );
      assert.deepEqual(
        await store().messages.delete(q.id, [{ seq: a.seq, token: a.receiptToken! }], {
          now: T + 2,
          requireCurrent: false,
        }),
        ['gone'],
      );
      assert.deepEqual(await messageCounts(store().messages, q.id, T + 2), { visible: 0, inflight: 0, delayed: 0 });
    });

    test('a delete names its queue: the same position in another queue is not touched', async () => {
      const q1 = await makeQueue(store());
      const q2 = await makeQueue(store());
      const {
        messages: [m],
      } = await store().messages.send(q1.id, [newMessage(T)]);
      assert.deepEqual(
        await store().messages.delete(q2.id, [{ seq: m!.seq, token: 'x' }], { now: T, requireCurrent: false }),
        ['gone'],
      );
      assert.equal((await messageCounts(store().messages, q1.id, T)).visible, 1);
    });

    test('a standard receive hands out older messages first: a returning message before newer ones', async () => {
      const q = await makeQueue(store());
      await store().messages.send(q.id, [newMessage(T, { body: 'old' })]);
      await store().messages.receive(q.id, receiveRequest(T, { visibilityTimeoutMs: 1000 }));
      await store().messages.send(q.id, [newMessage(T + 500, { body: 'new1' }), newMessage(T + 600, { body: 'new2' })]);
      const first = await store().messages.receive(q.id, receiveRequest(T + 2000, { max: 1, visibilityTimeoutMs: 0 }));
      assert.deepEqual(
        first.messages.map((m) => m.body),
        ['old'],
        'visible again after new1 and new2, but sent before them',
      );
      const all = await store().messages.receive(q.id, receiveRequest(T + 2001, { max: 10 }));
      assert.deepEqual(
        all.messages.map((m) => m.body),
        ['old', 'new1', 'new2'],
      );
    });

    test('changeVisibility counts from the call, applies to the current receipt, and caps at the limit', async () => {
      const q = await makeQueue(store());
      await store().messages.send(q.id, [newMessage(T)]);
      const m = (await store().messages.receive(q.id, receiveRequest(T, { visibilityTimeoutMs: 10_000 }))).messages[0]!;
      const ref = { seq: m.seq, token: m.receiptToken!, maxSinceReceiveMs: 43_200_000, requireCurrent: false };
      assert.deepEqual(
        await store().messages.changeVisibility(q.id, [{ ...ref, visibilityTimeoutMs: 5000 }], T + 1000),
        ['ok'],
      );
      assert.equal((await store().messages.receive(q.id, receiveRequest(T + 5999))).messages.length, 0);
      assert.deepEqual(
        await store().messages.changeVisibility(q.id, [{ ...ref, visibilityTimeoutMs: 43_200_000 }], T + 1000),
        ['tooLong'],
      );
      assert.deepEqual(await store().messages.changeVisibility(q.id, [{ ...ref, visibilityTimeoutMs: 0 }], T + 2000), [
        'ok',
      ]);
      const again = (await store().messages.receive(q.id, receiveRequest(T + 2000))).messages[0]!;
      assert.equal(again.receiveCount, 2);
      // An older receipt still changes it on a standard queue (SQS accepts it); FIFO refuses it.
      assert.deepEqual(
        await store().messages.changeVisibility(
          q.id,
          [{ ...ref, requireCurrent: true, visibilityTimeoutMs: 100 }],
          T + 2001,
        ),
        ['stale'],
      );
      assert.deepEqual(await store().messages.changeVisibility(q.id, [{ ...ref, visibilityTimeoutMs: 0 }], T + 2001), [
        'ok',
      ]);
      assert.equal(
        (await store().messages.receive(q.id, receiveRequest(T + 2001))).messages.length,
        1,
        'visible at once',
      );
      await store().messages.delete(q.id, [{ seq: again.seq, token: again.receiptToken! }], {
        now: T,
        requireCurrent: false,
      });
      assert.deepEqual(
        await store().messages.changeVisibility(q.id, [{ ...ref, visibilityTimeoutMs: 100 }], T + 2001),
        ['gone'],
      );
    });

    test('a lapsed receipt re-hides a standard message but no longer works on FIFO', async () => {
      const q = await makeQueue(store());
      await store().messages.send(q.id, [newMessage(T)]);
      const m = (await store().messages.receive(q.id, receiveRequest(T, { visibilityTimeoutMs: 1000 }))).messages[0]!;
      const ref = { seq: m.seq, token: m.receiptToken!, maxSinceReceiveMs: 43_200_000, visibilityTimeoutMs: 5000 };
      assert.deepEqual(await store().messages.changeVisibility(q.id, [{ ...ref, requireCurrent: true }], T + 2000), [
        'lapsed',
      ]);
      assert.deepEqual(await store().messages.changeVisibility(q.id, [{ ...ref, requireCurrent: false }], T + 2000), [
        'ok',
      ]);
      assert.equal((await store().messages.receive(q.id, receiveRequest(T + 6999))).messages.length, 0);
    });

    test('purge deletes every message; deleting a queue deletes its messages', async () => {
      const q = await makeQueue(store());
      await store().messages.send(q.id, [newMessage(T), newMessage(T)]);
      await store().queues.purge(q.id, T, 60_000);
      assert.deepEqual(await messageCounts(store().messages, q.id, T), { visible: 0, inflight: 0, delayed: 0 });
      await store().messages.send(q.id, [newMessage(T)]);
      await store().queues.delete(q.id);
      assert.deepEqual(await messageCounts(store().messages, q.id, T), { visible: 0, inflight: 0, delayed: 0 });
    });

    test('onAvailable fires after a send is committed, and stops after unsubscribe', async () => {
      const q = await makeQueue(store());
      let calls = 0;
      const off = store().wakeups.subscribe(q.id, () => calls++);
      await store().messages.send(q.id, [newMessage(T)]);
      await new Promise((r) => setImmediate(r));
      assert.ok(calls >= 1);
      off();
      const before = calls;
      await store().messages.send(q.id, [newMessage(T)]);
      await new Promise((r) => setImmediate(r));
      assert.equal(calls, before);
    });

    test('concurrent writes in one turn all commit and each gets its own result', async () => {
      const q = await makeQueue(store());
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) => store().messages.send(q.id, [newMessage(T + i)])),
      );
      assert.equal(new Set(results.map((r) => r.messages[0]!.seq)).size, 50);
      assert.equal((await messageCounts(store().messages, q.id, T + 100)).visible, 50);
    });

    test('one failing write in a group commit does not undo the others', async () => {
      const q = await makeQueue(store());
      const bad = store().messages.send(q.id, [newMessage(T, { body: null as unknown as string })]);
      const good = store().messages.send(q.id, [newMessage(T)]);
      await assert.rejects(bad);
      await good;
      assert.equal((await messageCounts(store().messages, q.id, T)).visible, 1);
    });
  });
};

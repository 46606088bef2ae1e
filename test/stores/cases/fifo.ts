import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { makeQueue, newMessage, receiveRequest, useStore, type CaseGroup } from '../harness.js';
import { messageCounts } from '../../../src/engine/store/messages.js';

const T = 1_700_000_000_000;
const fifoReceive = (now: number, extra = {}) => receiveRequest(now, { fifo: true, ...extra });
const inGroup = (g: string, i: number, extra = {}) =>
  newMessage(T, { groupId: g, dedupId: `${g}-${i}`, body: `${g}${i}`, ...extra });

export const fifoCases: CaseGroup = (open) => {
  describe('fifo', () => {
    const store = useStore(open);

    test('a group is delivered in order, and held while its first message is in flight', async () => {
      const q = await makeQueue(store(), { fifo: true });
      await store().messages.send(q.id, [inGroup('a', 1), inGroup('a', 2), inGroup('a', 3)]);
      const first = await store().messages.receive(q.id, fifoReceive(T, { max: 2 }));
      assert.deepEqual(
        first.messages.map((m) => m.body),
        ['a1', 'a2'],
      );
      assert.equal((await store().messages.receive(q.id, fifoReceive(T))).messages.length, 0, 'group held');
      await store().messages.delete(q.id, [{ seq: first.messages[0]!.seq, token: first.messages[0]!.receiptToken! }], {
        now: T,
        requireCurrent: true,
      });
      assert.equal((await store().messages.receive(q.id, fifoReceive(T))).messages.length, 0, 'a2 still in flight');
      await store().messages.delete(q.id, [{ seq: first.messages[1]!.seq, token: first.messages[1]!.receiptToken! }], {
        now: T,
        requireCurrent: true,
      });
      assert.deepEqual(
        (await store().messages.receive(q.id, fifoReceive(T))).messages.map((m) => m.body),
        ['a3'],
      );
    });

    test('other groups keep flowing while one is held, and one receive spans groups', async () => {
      const q = await makeQueue(store(), { fifo: true });
      await store().messages.send(q.id, [inGroup('x', 1), inGroup('y', 1), inGroup('x', 2), inGroup('z', 1)]);
      const r = await store().messages.receive(q.id, fifoReceive(T, { max: 10 }));
      assert.deepEqual(r.messages.map((m) => m.body).sort(), ['x1', 'x2', 'y1', 'z1']);
      const x = r.messages.filter((m) => m.groupId === 'x').map((m) => m.body);
      assert.deepEqual(x, ['x1', 'x2'], 'in order within the group');
    });

    test('a visibility timeout releases the group with its head message first', async () => {
      const q = await makeQueue(store(), { fifo: true });
      await store().messages.send(q.id, [inGroup('g', 1), inGroup('g', 2)]);
      await store().messages.receive(q.id, fifoReceive(T, { max: 1, visibilityTimeoutMs: 1000 }));
      assert.equal((await store().messages.receive(q.id, fifoReceive(T + 999))).messages.length, 0);
      const again = await store().messages.receive(q.id, fifoReceive(T + 1000, { max: 1 }));
      assert.deepEqual(
        again.messages.map((m) => [m.body, m.receiveCount]),
        [['g1', 2]],
      );
    });

    test('a group whose head is visible again reopens up to its first invisible message', async () => {
      const q = await makeQueue(store(), { fifo: true });
      await store().messages.send(q.id, [inGroup('g1', 1), inGroup('g1', 2), inGroup('g2', 1)]);
      const [m1, m2] = (await store().messages.receive(q.id, fifoReceive(T, { max: 2 }))).messages;
      assert.deepEqual([m1!.body, m2!.body], ['g11', 'g12']);
      const change = {
        seq: m1!.seq,
        token: m1!.receiptToken!,
        visibilityTimeoutMs: 1000,
        maxSinceReceiveMs: 43_200_000,
        requireCurrent: true,
      };
      assert.deepEqual(await store().messages.changeVisibility(q.id, [change], T), ['ok']);
      const r = await store().messages.receive(q.id, fifoReceive(T + 2000, { max: 3 }));
      assert.deepEqual(
        r.messages.map((m) => m.body),
        ['g21', 'g11'],
        'g1-m2 is still in flight and stays hidden',
      );
    });

    for (const [extended, back] of [
      [0, []],
      [1, ['foo']],
      [2, ['foo', 'bar']],
    ] as const) {
      test(`extending message ${extended + 1} of 3 hides it and what follows, not what precedes`, async () => {
        const q = await makeQueue(store(), { fifo: true });
        await store().messages.send(
          q.id,
          ['foo', 'bar', 'baz'].map((b, i) => inGroup('fb', i, { body: b })),
        );
        const got = (await store().messages.receive(q.id, fifoReceive(T, { visibilityTimeoutMs: 1000 }))).messages;
        assert.deepEqual(
          got.map((m) => m.body),
          ['foo', 'bar', 'baz'],
        );
        const m = got[extended]!;
        const change = {
          seq: m.seq,
          token: m.receiptToken!,
          visibilityTimeoutMs: 4000,
          maxSinceReceiveMs: 43_200_000,
          requireCurrent: true,
        };
        assert.deepEqual(await store().messages.changeVisibility(q.id, [change], T), ['ok']);
        const r = await store().messages.receive(q.id, fifoReceive(T + 2500));
        assert.deepEqual(
          r.messages.map((x) => x.body),
          back,
        );
      });
    }

    test('changing a later message to visible does not release a group whose head is in flight', async () => {
      const q = await makeQueue(store(), { fifo: true });
      await store().messages.send(q.id, [inGroup('h', 1), inGroup('h', 2), inGroup('h', 3)]);
      const [m1, m2] = (await store().messages.receive(q.id, fifoReceive(T, { max: 2 }))).messages;
      const change = { visibilityTimeoutMs: 0, maxSinceReceiveMs: 43_200_000, requireCurrent: true };
      await store().messages.changeVisibility(q.id, [{ seq: m2!.seq, token: m2!.receiptToken!, ...change }], T + 1);
      assert.equal((await store().messages.receive(q.id, fifoReceive(T + 1))).messages.length, 0);
      await store().messages.changeVisibility(q.id, [{ seq: m1!.seq, token: m1!.receiptToken!, ...change }], T + 2);
      assert.deepEqual(
        (await store().messages.receive(q.id, fifoReceive(T + 2))).messages.map((m) => m.body),
        ['h1', 'h2', 'h3'],
      );
    });

    test('a longer visibility holds the group longer, a shorter one releases it sooner', async () => {
      const q = await makeQueue(store(), { fifo: true });
      await store().messages.send(q.id, [inGroup('v', 1), inGroup('v', 2)]);
      const [m] = (await store().messages.receive(q.id, fifoReceive(T, { max: 1, visibilityTimeoutMs: 1000 })))
        .messages;
      const change = (visibilityTimeoutMs: number) => ({
        seq: m!.seq,
        token: m!.receiptToken!,
        visibilityTimeoutMs,
        maxSinceReceiveMs: 43_200_000,
        requireCurrent: true,
      });
      assert.deepEqual(await store().messages.changeVisibility(q.id, [change(5000)], T + 500), ['ok']);
      assert.equal(
        (await store().messages.receive(q.id, fifoReceive(T + 1000))).messages.length,
        0,
        'held past the first timeout',
      );
      assert.deepEqual(await store().messages.changeVisibility(q.id, [change(2000)], T + 1500), ['ok']);
      assert.equal(
        (await store().messages.receive(q.id, fifoReceive(T + 3499))).messages.length,
        0,
        'held until the shorter timeout ends',
      );
      const again = await store().messages.receive(q.id, fifoReceive(T + 3500));
      assert.deepEqual(
        again.messages.map((x) => [x.body, x.receiveCount]),
        [
          ['v1', 2],
          ['v2', 1],
        ],
      );
    });

    test('deleting a held message signals that its group has a next message', async () => {
      const q = await makeQueue(store(), { fifo: true });
      await store().messages.send(q.id, [inGroup('n', 1), inGroup('n', 2)]);
      const [m] = (await store().messages.receive(q.id, fifoReceive(T, { max: 1 }))).messages;
      let calls = 0;
      const off = store().wakeups.subscribe(q.id, () => calls++);
      try {
        await store().messages.delete(q.id, [{ seq: m!.seq, token: m!.receiptToken! }], {
          now: T + 1,
          requireCurrent: true,
        });
        await new Promise((r) => setImmediate(r));
        assert.ok(calls >= 1, 'n2 is available now');
      } finally {
        off();
      }
    });

    test('a delayed message holds back the messages behind it in its group', async () => {
      const q = await makeQueue(store(), { fifo: true });
      await store().messages.send(q.id, [inGroup('d', 1, { visibleAt: T + 500 }), inGroup('d', 2)]);
      assert.equal((await store().messages.receive(q.id, fifoReceive(T))).messages.length, 0);
      assert.deepEqual(
        (await store().messages.receive(q.id, fifoReceive(T + 500))).messages.map((m) => m.body),
        ['d1', 'd2'],
      );
    });

    test('a duplicate within the interval returns the original and stores nothing', async () => {
      const q = await makeQueue(store(), { fifo: true });
      const dedup = { dedupScope: 'queue', dedupUntil: T + 300_000 };
      const {
        messages: [a],
      } = await store().messages.send(q.id, [inGroup('p', 1, { dedupId: 'same', ...dedup })]);
      const {
        messages: [b],
      } = await store().messages.send(q.id, [inGroup('q', 9, { dedupId: 'same', ...dedup, sentAt: T + 1000 })]);
      assert.equal(b!.duplicate, true);
      assert.equal(b!.messageId, a!.messageId);
      assert.equal(b!.seq, a!.seq);
      assert.equal((await messageCounts(store().messages, q.id, T + 1000)).visible, 1);
      const {
        messages: [c],
      } = await store().messages.send(q.id, [inGroup('p', 2, { dedupId: 'same', ...dedup, sentAt: T + 300_000 })]);
      assert.equal(c!.duplicate, undefined, 'interval over');
      assert.equal((await messageCounts(store().messages, q.id, T + 300_000)).visible, 2);
    });

    test('a purge forgets deduplication ids: the same id afterwards stores a new message', async () => {
      const q = await makeQueue(store(), { fifo: true });
      const dedup = { dedupId: 'again', dedupScope: 'queue', dedupUntil: T + 300_000 };
      const {
        messages: [a],
      } = await store().messages.send(q.id, [inGroup('u', 1, dedup)]);
      assert.equal(await store().queues.purge(q.id, T + 1, 60_000), true);
      const {
        messages: [b],
      } = await store().messages.send(q.id, [inGroup('u', 2, { ...dedup, sentAt: T + 2 })]);
      assert.equal(b!.duplicate, undefined, 'not a duplicate of the purged message');
      assert.notEqual(b!.messageId, a!.messageId);
      assert.deepEqual(
        (await store().messages.receive(q.id, fifoReceive(T + 2))).messages.map((m) => m.body),
        ['u2'],
      );
    });

    test('deduplication scoped by group treats the same id in two groups as two messages', async () => {
      const q = await makeQueue(store(), { fifo: true });
      await store().messages.send(q.id, [
        inGroup('a', 1, { dedupId: 'x', dedupScope: 'group:a', dedupUntil: T + 300_000 }),
      ]);
      const {
        messages: [b],
      } = await store().messages.send(q.id, [
        inGroup('b', 1, { dedupId: 'x', dedupScope: 'group:b', dedupUntil: T + 300_000 }),
      ]);
      assert.equal(b!.duplicate, undefined);
    });

    test('an id deduplicated under the queue scope still counts after a change to the group scope', async () => {
      const q = await makeQueue(store(), { fifo: true });
      const until = { dedupUntil: T + 300_000 };
      const {
        messages: [a],
      } = await store().messages.send(q.id, [
        inGroup('A', 1, { dedupId: 'D', dedupScope: 'queue', dedupOtherScope: 'group:A', ...until }),
      ]);
      // DeduplicationScope is now messageGroup: a send in group B with the same id.
      const asGroup = (g: string, sentAt: number) =>
        inGroup(g, 3, {
          dedupId: 'D',
          dedupScope: `group:${g}`,
          dedupOtherScope: 'queue',
          sentAt,
          dedupUntil: sentAt + 300_000,
        });
      const {
        messages: [b],
      } = await store().messages.send(q.id, [asGroup('B', T + 1000)]);
      assert.equal(b!.duplicate, true, 'dropped as a duplicate of the queue-scoped id');
      assert.equal(b!.messageId, a!.messageId);
      assert.equal((await messageCounts(store().messages, q.id, T + 1000)).visible, 1);
      const {
        messages: [c],
      } = await store().messages.send(q.id, [asGroup('B', T + 300_000)]);
      assert.equal(c!.duplicate, undefined, 'the interval is over');
      const {
        messages: [d],
      } = await store().messages.send(q.id, [asGroup('C', T + 300_001)]);
      assert.equal(d!.duplicate, undefined, 'group scope: another group is another message');
    });

    test('sweepExpired forgets deduplication ids past their interval', async () => {
      const q = await makeQueue(store(), { fifo: true });
      await store().messages.send(q.id, [inGroup('s', 1, { dedupId: 'sw', dedupScope: 'queue', dedupUntil: T + 10 })]);
      assert.ok((await store().maintenance.forgetDeduplication(T + 10)) >= 1);
    });

    test('a retried receive attempt returns the same messages and receipts', async () => {
      const q = await makeQueue(store(), { fifo: true });
      await store().messages.send(q.id, [inGroup('r', 1), inGroup('r', 2)]);
      const attempt = { attemptId: 'try-1', attemptUntil: T + 300_000, visibilityTimeoutMs: 1000 };
      const first = await store().messages.receive(q.id, fifoReceive(T, attempt));
      const retry = await store().messages.receive(q.id, fifoReceive(T + 500, attempt));
      assert.deepEqual(
        retry.messages.map((m) => [m.seq, m.receiptToken]),
        first.messages.map((m) => [m.seq, m.receiptToken]),
      );
      // The retry restarted the visibility timeout.
      assert.equal((await store().messages.receive(q.id, fifoReceive(T + 1200))).messages.length, 0);
      const late = await store().messages.receive(q.id, fifoReceive(T + 1600, attempt));
      assert.notDeepEqual(
        late.messages.map((m) => m.receiptToken),
        first.messages.map((m) => m.receiptToken),
        'expired: a new receive',
      );
    });

    test('dead-lettering a poison message moves it to the end of the DLQ and lets its group flow', async () => {
      const q = await makeQueue(store(), { fifo: true });
      const dlq = await makeQueue(store(), { fifo: true });
      await store().messages.send(dlq.id, [inGroup('p', 0)]);
      await store().messages.send(q.id, [inGroup('p', 1), inGroup('p', 2)]);
      const deadLetter = {
        queueId: dlq.id,
        maxReceiveCount: 1,
        reason: 'delivery_limit' as const,
        arrival: (m: { messageId: string }) => ({
          kind: 'move' as const,
          sentAt: T + 5,
          dedupId: m.messageId,
          deadLetterSourceArn: 'arn:src',
        }),
      };
      await store().messages.receive(q.id, fifoReceive(T, { max: 1, visibilityTimeoutMs: 0, deadLetter }));
      const r = await store().messages.receive(q.id, fifoReceive(T + 1, { max: 1, deadLetter }));
      assert.equal(r.deadLettered.length, 1);
      assert.deepEqual(
        r.messages.map((m) => m.body),
        ['p2'],
      );
      const inDlq = await store().messages.receive(dlq.id, fifoReceive(T + 2));
      assert.deepEqual(
        inDlq.messages.map((m) => m.body),
        ['p0', 'p1'],
        'appended after what the DLQ held',
      );
      const moved = inDlq.messages[1]!;
      assert.equal(moved.dedupId, moved.messageId);
      assert.equal(moved.sentAt, T + 5);
      assert.equal(moved.deadLetterSourceArn, 'arn:src');
      assert.ok(moved.seq > inDlq.messages[0]!.seq);
    });

    test('countInflight counts the messages of a FIFO queue in flight across its groups (for the 120,000 limit)', async () => {
      const q = await makeQueue(store(), { fifo: true });
      await store().messages.send(
        q.id,
        Array.from({ length: 30 }, (_, i) => inGroup(`c${i % 7}`, i)),
      );
      const r = await store().messages.receive(q.id, fifoReceive(T, { max: 10 }));
      const r2 = await store().messages.receive(q.id, fifoReceive(T, { max: 10 }));
      assert.equal((await store().messages.inflightByGroup(q.id, T)).total, r.messages.length + r2.messages.length);
      assert.ok(r.messages.length + r2.messages.length > 10, 'across receives and groups');
    });

    test('group selection does not depend on the backlog of a held group', async () => {
      const q = await makeQueue(store(), { fifo: true });
      await store().messages.send(
        q.id,
        Array.from({ length: 2000 }, (_, i) => inGroup('big', i)),
      );
      await store().messages.send(q.id, [inGroup('small', 1)]);
      await store().messages.receive(q.id, fifoReceive(T, { max: 1 }));
      const r = await store().messages.receive(q.id, fifoReceive(T, { max: 10 }));
      assert.deepEqual(
        r.messages.map((m) => m.body),
        ['small1'],
      );
    });
  });
};

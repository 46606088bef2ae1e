import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { QueueRecord, StoredMessage } from '../../../src/engine/kernel/types.js';
import type { DeadLetterRule } from '../../../src/engine/store/store.js';
import { makeQueue, newMessage, receiveRequest, useStore, type CaseGroup } from '../harness.js';
import { messageCounts } from '../../../src/engine/store/messages.js';

const T = 1_700_000_000_000;

/** Dead-letters as the engine does: standard keeps the enqueue time, FIFO restarts it at the move. */
function toDlq(dlq: QueueRecord, now: number): DeadLetterRule {
  return {
    queueId: dlq.id,
    maxReceiveCount: 1,
    reason: 'delivery_limit',
    arrival: (m: StoredMessage) => ({
      kind: 'move',
      sentAt: dlq.fifo ? now : m.sentAt,
      dedupId: m.dedupId ?? m.messageId,
      deadLetterSourceArn: 'arn:src',
    }),
  };
}

/**
 * Queue depths for metrics and the console's overview: many queues in one call, the same
 * counts as `count`, the oldest message by the seed's rule, and groups in flight.
 */
export const depthCases: CaseGroup = (open) => {
  describe('queue depths', () => {
    const store = useStore(open);

    test('depths of several queues agree with count, and unknown ids are left out', async () => {
      const a = await makeQueue(store());
      const b = await makeQueue(store());
      const empty = await makeQueue(store());
      await store().messages.send(a.id, [
        newMessage(T),
        newMessage(T + 1),
        newMessage(T + 2, { visibleAt: T + 60_000 }),
      ]);
      await store().messages.send(b.id, [newMessage(T + 5)]);
      await store().messages.receive(a.id, receiveRequest(T + 10, { max: 1 }));
      const depths = await store().messages.depths([a.id, b.id, empty.id, 987_654_321], T + 20);
      assert.deepEqual(
        [...depths.keys()].sort((x, y) => x - y),
        [a.id, b.id, empty.id].sort((x, y) => x - y),
      );
      assert.deepEqual(depths.get(a.id), { visible: 1, inflight: 1, delayed: 1, oldestSentAt: T, groupsInflight: 0 });
      assert.deepEqual(depths.get(b.id), {
        visible: 1,
        inflight: 0,
        delayed: 0,
        oldestSentAt: T + 5,
        groupsInflight: 0,
      });
      assert.deepEqual(depths.get(empty.id), { visible: 0, inflight: 0, delayed: 0, groupsInflight: 0 });
      for (const q of [a, b, empty]) {
        const { visible, inflight, delayed } = depths.get(q.id)!;
        assert.deepEqual(await messageCounts(store().messages, q.id, T + 20), { visible, inflight, delayed });
      }
    });

    test('deletes, purges and visibility lapses keep the depth exact', async () => {
      const q = await makeQueue(store());
      await store().messages.send(q.id, [newMessage(T), newMessage(T), newMessage(T)]);
      const got = await store().messages.receive(q.id, receiveRequest(T + 1, { max: 2, visibilityTimeoutMs: 100 }));
      const [first] = got.messages;
      await store().messages.delete(q.id, [{ seq: first!.seq, token: first!.receiptToken! }], {
        now: T + 2,
        requireCurrent: false,
      });
      assert.deepEqual(await messageCounts(store().messages, q.id, T + 2), { visible: 1, inflight: 1, delayed: 0 });
      assert.deepEqual(
        await messageCounts(store().messages, q.id, T + 500),
        { visible: 2, inflight: 0, delayed: 0 },
        'the lapsed receipt is visible again',
      );
      assert.equal(await store().queues.purge(q.id, T + 600, 60_000), true);
      assert.deepEqual((await store().messages.depths([q.id], T + 600)).get(q.id), {
        visible: 0,
        inflight: 0,
        delayed: 0,
        groupsInflight: 0,
      });
      await store().messages.send(q.id, [newMessage(T + 700)]);
      assert.equal(
        (await store().messages.depths([q.id], T + 700)).get(q.id)!.visible,
        1,
        'counting starts again after a purge',
      );
    });

    test('a standard DLQ keeps the original enqueue time as its oldest; a FIFO DLQ starts it at the move', async () => {
      const src = await makeQueue(store());
      const dlq = await makeQueue(store());
      await store().messages.send(src.id, [newMessage(T)]);
      await store().messages.receive(
        src.id,
        receiveRequest(T + 1_000, { visibilityTimeoutMs: 0, deadLetter: toDlq(dlq, T + 1_000) }),
      );
      await store().messages.receive(src.id, receiveRequest(T + 2_000, { deadLetter: toDlq(dlq, T + 2_000) }));
      const standard = await store().messages.depths([src.id, dlq.id], T + 3_000);
      assert.equal(standard.get(src.id)!.visible, 0);
      assert.equal(standard.get(dlq.id)!.visible, 1);
      assert.equal(standard.get(dlq.id)!.oldestSentAt, T);

      const fsrc = await makeQueue(store(), { name: `fs${Date.now()}.fifo`, fifo: true });
      const fdlq = await makeQueue(store(), { name: `fd${Date.now()}.fifo`, fifo: true });
      await store().messages.send(fsrc.id, [newMessage(T, { groupId: 'g', dedupId: 'd1' })]);
      await store().messages.receive(
        fsrc.id,
        receiveRequest(T + 1_000, { fifo: true, visibilityTimeoutMs: 0, deadLetter: toDlq(fdlq, T + 1_000) }),
      );
      await store().messages.receive(
        fsrc.id,
        receiveRequest(T + 2_000, { fifo: true, deadLetter: toDlq(fdlq, T + 2_000) }),
      );
      const fifo = await store().messages.depths([fdlq.id], T + 3_000);
      assert.equal(fifo.get(fdlq.id)!.visible, 1);
      assert.equal(fifo.get(fdlq.id)!.oldestSentAt, T + 2_000);
    });

    test('FIFO: groups with a message in flight', async () => {
      const q = await makeQueue(store(), { name: `g${Date.now()}.fifo`, fifo: true });
      await store().messages.send(
        q.id,
        ['a', 'a', 'b', 'c'].map((g, i) => newMessage(T, { groupId: g, dedupId: `d${i}` })),
      );
      await store().messages.receive(q.id, receiveRequest(T + 1, { fifo: true, max: 3, visibilityTimeoutMs: 1_000 }));
      const d = (await store().messages.depths([q.id], T + 2)).get(q.id)!;
      assert.equal(d.inflight, 3);
      assert.equal(d.groupsInflight, 2, 'two groups are held: a (two messages) and b');
      assert.equal(
        (await store().messages.depths([q.id], T + 2_000)).get(q.id)!.groupsInflight,
        0,
        'none once the receipts lapse',
      );
    });
  });
};

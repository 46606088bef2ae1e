import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { minuteOf } from '../../../src/engine/store/activity.js';
import type { MoveById } from '../../../src/engine/store/store.js';
import type { QueueRecord, StoredMessage } from '../../../src/engine/kernel/types.js';
import { makeQueue, newMessage, receiveRequest, useStore, type CaseGroup } from '../harness.js';

const T = minuteOf(1_700_000_000_000);

/** Moves visible messages to `to` (or to the queue named in the message's body, for a missing one), as new messages. */
function rules(now: number, to: QueueRecord): MoveById {
  return {
    now,
    matches: (m) => m.visibleAt <= now,
    destination: (m) => ({
      accountId: to.accountId,
      region: to.region,
      name: m.body === 'lost' ? 'no-such-queue' : to.name,
    }),
    rewrite: (m: StoredMessage) => ({
      ...newMessage(now, { body: m.body, groupId: m.groupId, dedupId: m.dedupId }),
      messageId: `new-${m.messageId}-${Math.random()}`,
    }),
  };
}

/** MoveMessagesById and ChangeMessageVisibilityById's store operations (moveTasks.moveByIds, inflightById). */
export const moveByIdCases: CaseGroup = (open) => {
  describe('moves by id', () => {
    const store = useStore(open);

    test('moveByIds moves each visible message atomically, reports the others, and wakes the destination', async () => {
      const src = await makeQueue(store());
      const dst = await makeQueue(store());
      const [visible, held, lost] = [newMessage(T), newMessage(T), newMessage(T, { body: 'lost' })];
      await store().messages.send(src.id, [held]);
      await store().messages.receive(src.id, receiveRequest(T + 1, { max: 1 }));
      await store().messages.send(src.id, [visible, lost]);
      const r = await store().moveTasks.moveByIds(
        src.id,
        [visible.messageId, held.messageId, 'missing', lost.messageId],
        rules(T + 2, dst),
      );
      assert.deepEqual(
        r.map((x) => [x.id, x.outcome]),
        [
          [visible.messageId, 'moved'],
          [held.messageId, 'refused'],
          ['missing', 'notFound'],
          [lost.messageId, 'noDestination'],
        ],
      );
      assert.equal(r[0]!.destination!.id, dst.id);
      assert.equal(r[1]!.message!.messageId, held.messageId, 'a refused message comes back for the engine to explain');
      const inDst = await store().messages.peek(dst.id, 0, 10);
      assert.deepEqual(
        inDst.map((m) => [m.messageId, m.body]),
        [[r[0]!.newMessageId, visible.body]],
      );
      assert.deepEqual(
        (await store().messages.peek(src.id, 0, 10)).map((m) => m.messageId).sort(),
        [held.messageId, lost.messageId].sort(),
      );
      // Woken like a move task's destination: a receive there finds it.
      assert.equal((await store().messages.receive(dst.id, receiveRequest(T + 3))).messages.length, 1);
    });

    test('moveByIds: concurrent moves of one message move it once', async () => {
      const src = await makeQueue(store());
      const dst = await makeQueue(store());
      const m = newMessage(T);
      await store().messages.send(src.id, [m]);
      const both = await Promise.all(
        [1, 2].map(() => store().moveTasks.moveByIds(src.id, [m.messageId], rules(T + 1, dst))),
      );
      assert.deepEqual(both.map(([x]) => x!.outcome).sort(), ['moved', 'notFound']);
      assert.equal((await store().messages.peek(dst.id, 0, 10)).length, 1);
      assert.equal((await store().messages.peek(src.id, 0, 10)).length, 0);
    });

    test('moveByIds: a FIFO message keeps its group, and moving a group head releases the group', async () => {
      const src = await makeQueue(store(), { name: `mv${Date.now()}a.fifo`, fifo: true });
      const dst = await makeQueue(store(), { name: `mv${Date.now()}b.fifo`, fifo: true });
      const [a, b] = [newMessage(T, { groupId: 'g', dedupId: 'a' }), newMessage(T, { groupId: 'g', dedupId: 'b' })];
      await store().messages.send(src.id, [a, b]);
      const r = await store().moveTasks.moveByIds(src.id, [a.messageId], rules(T + 1, dst));
      assert.equal(r[0]!.outcome, 'moved');
      const there = await store().messages.receive(dst.id, receiveRequest(T + 2, { fifo: true }));
      assert.deepEqual(
        there.messages.map((m) => [m.body, m.groupId]),
        [[a.body, 'g']],
      );
      const here = await store().messages.receive(src.id, receiveRequest(T + 2, { fifo: true }));
      assert.deepEqual(
        here.messages.map((m) => m.messageId),
        [b.messageId],
      );
    });

    test('inflightById finds a message only while it is in flight', async () => {
      const q = await makeQueue(store());
      const [m, delayed] = [newMessage(T), newMessage(T, { visibleAt: T + 60_000 })];
      await store().messages.send(q.id, [m, delayed]);
      assert.equal(await store().moveTasks.inflightById(q.id, m.messageId, T + 1), undefined, 'visible');
      assert.equal(
        await store().moveTasks.inflightById(q.id, delayed.messageId, T + 1),
        undefined,
        'delayed, never received',
      );
      const [got] = (await store().messages.receive(q.id, receiveRequest(T + 1, { visibilityTimeoutMs: 1_000 })))
        .messages;
      const found = await store().moveTasks.inflightById(q.id, m.messageId, T + 2);
      assert.equal(found?.receiptToken, got!.receiptToken);
      assert.equal(
        await store().moveTasks.inflightById(q.id, m.messageId, T + 1_001),
        undefined,
        'its visibility ended',
      );
    });
  });
};

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { makeQueue, newMessage, receiveRequest, useStore, type CaseGroup } from '../harness.js';

const T = 1_700_000_000_000;

/**
 * Fair queues, the store's part (the rule is the engine's): in-flight counts by group,
 * the quiet groups' depth, and a receive told of noisy groups that finds the quiet
 * groups' ready messages even behind a noisy backlog deeper than its window.
 */
export const fairCases: CaseGroup = (open) => {
  describe('fair queues', () => {
    const store = useStore(open);

    test('a receive told of noisy groups takes quiet groups first, then the noisy group with the fewest in flight', async () => {
      const q = await makeQueue(store());
      const big = Array.from({ length: 300 }, (_, i) =>
        newMessage(T + i, { groupId: i % 2 ? 'b' : 'a', body: `big-${i}` }),
      );
      await store().messages.send(q.id, big);
      await store().messages.send(q.id, [
        newMessage(T + 400, { groupId: 'q1', body: 'q1' }),
        newMessage(T + 401, { body: 'none' }),
        newMessage(T + 402, { groupId: 'q2', body: 'q2' }),
        newMessage(T + 403, { groupId: 'q1', body: 'q1-second', visibleAt: T + 60_000 }),
      ]);
      const noisy = new Map([
        ['a', 40],
        ['b', 35],
      ]);
      const r = await store().messages.receive(q.id, receiveRequest(T + 500, { max: 5, noisy }));
      // The ungrouped message sits behind 300 noisy ones, past the window: it waits (docs/fair-queues.md).
      assert.deepEqual(
        r.messages.map((m) => m.body),
        ['q1', 'q2', 'big-1', 'big-3', 'big-5'],
      );
      const plain = await store().messages.receive(q.id, receiveRequest(T + 500, { max: 3 }));
      assert.deepEqual(
        plain.messages.map((m) => m.body),
        ['big-0', 'big-2', 'big-4'],
      );
    });

    test('in flight by group reads only messages in flight, ungrouped ones in the total', async () => {
      const q = await makeQueue(store());
      await store().messages.send(q.id, [
        ...Array.from({ length: 4 }, (_, i) => newMessage(T + i, { groupId: 'a' })),
        newMessage(T + 10, { groupId: 'b' }),
        newMessage(T + 11),
        newMessage(T + 12, { groupId: 'c', visibleAt: T + 60_000 }),
      ]);
      await store().messages.receive(q.id, receiveRequest(T + 20, { max: 6 }));
      const inflight = await store().messages.inflightByGroup(q.id, T + 20);
      assert.equal(inflight.total, 6);
      assert.deepEqual([...inflight.groups].sort(), [
        ['a', 4],
        ['b', 1],
      ]);
      assert.deepEqual(await store().messages.quietDepth(q.id, ['a'], T + 20), {
        visible: 0,
        inflight: 2,
        delayed: 1,
        oldestSentAt: T + 10,
      });
      assert.deepEqual(await store().messages.quietDepth(q.id, [], T + 20), {
        visible: 0,
        inflight: 6,
        delayed: 1,
        oldestSentAt: T,
      });
    });
  });
};

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { recordDeath } from '../../../src/engine/dead-letters/deaths.js';
import { minuteOf } from '../../../src/engine/store/activity.js';
import type { DeadLetterRule, DeadLetterTarget } from '../../../src/engine/store/store.js';
import type { DeathReason, QueueRecord, StoredMessage } from '../../../src/engine/kernel/types.js';
import { makeQueue, newMessage, receiveRequest, useStore, type CaseGroup } from '../harness.js';
import { messageCounts } from '../../../src/engine/store/messages.js';

/** A minute boundary, so the cases know which minute each operation falls in. */
const T = minuteOf(1_700_000_000_000);
const M = 60_000;

/** Dead-letters as the engine does, recording the death with `reason` at `time`. */
function target(dlq: QueueRecord, source: QueueRecord, reason: DeathReason, time: number): DeadLetterTarget {
  return {
    queueId: dlq.id,
    reason,
    arrival: (m: StoredMessage) => ({
      kind: 'move',
      sentAt: m.sentAt,
      dedupId: m.dedupId,
      deadLetterSourceArn: `arn:${source.name}`,
      deaths: recordDeath(m.deaths, { queue: source.name, queueArn: `arn:${source.name}`, reason, time }),
    }),
  };
}

const rule = (dlq: QueueRecord, source: QueueRecord, time: number): DeadLetterRule => ({
  ...target(dlq, source, 'delivery_limit', time),
  maxReceiveCount: 1,
});

/**
 * What the console's extensions need of a store: activity per minute (the engine's
 * counts, added in batches), a dead-letter queue's breakdown by source and reason, and deletes by id.
 */
export const consoleCases: CaseGroup = (open) => {
  describe('console extensions', () => {
    const store = useStore(open);

    test('activity: counts added per queue and minute (several adds to one minute sum), sampled depths and pruning', async () => {
      const src = await makeQueue(store());
      const dlq = await makeQueue(store());
      const counts = (
        queueId: number,
        minute: number,
        sent: number,
        received: number,
        deleted: number,
        deadLettered: number,
        deadLetterArrivals: number,
      ) => ({ queueId, minute, sent, received, deleted, deadLettered, deadLetterArrivals });
      await store().activity.add([counts(src.id, T, 3, 2, 1, 0, 0)]);
      // Two adds to one minute, as two nodes (or two flushes) make, and a repeated row in one add.
      await store().activity.add([counts(src.id, T + M, 1, 1, 0, 1, 0), counts(dlq.id, T + M, 0, 0, 0, 0, 1)]);
      await store().activity.add([
        counts(src.id, T + M, 0, 0, 0, 0, 0),
        counts(dlq.id, T + M, 0, 0, 0, 0, 1),
        counts(dlq.id, T + M, 0, 0, 0, 0, 1),
      ]);
      await store().activity.add([]);
      await store().activity.recordDepths(T, [
        [src.id, 2],
        [dlq.id, 0],
      ]);
      await store().activity.recordDepths(T + M, [
        [src.id, 2],
        [dlq.id, 3],
      ]);

      assert.deepEqual(await store().activity.minutes(src.id, T - M, T + 2 * M), [
        { minute: T, sent: 3, received: 2, deleted: 1, deadLettered: 0, deadLetterArrivals: 0, depth: 2 },
        { minute: T + M, sent: 1, received: 1, deleted: 0, deadLettered: 1, deadLetterArrivals: 0, depth: 2 },
      ]);
      assert.deepEqual(await store().activity.minutes(dlq.id, T, T + M), [
        { minute: T, sent: 0, received: 0, deleted: 0, deadLettered: 0, deadLetterArrivals: 0, depth: 0 },
        { minute: T + M, sent: 0, received: 0, deleted: 0, deadLettered: 0, deadLetterArrivals: 3, depth: 3 },
      ]);
      assert.deepEqual(
        (await store().activity.active(T + M)).filter((id) => id === src.id || id === dlq.id).sort(),
        [src.id, dlq.id].sort(),
      );
      assert.deepEqual(
        (await store().activity.minutes(src.id, T + M, T + M)).map((m) => m.minute),
        [T + M],
        'the range is inclusive',
      );
      const byQueueAndMinute = (rows: { queueId: number; minute: number }[]) =>
        rows.sort((a, b) => a.queueId - b.queueId || a.minute - b.minute);
      assert.deepEqual(
        byQueueAndMinute(await store().activity.counts(T, T + M, [src.id, dlq.id])),
        byQueueAndMinute([
          counts(src.id, T, 3, 2, 1, 0, 0),
          counts(src.id, T + M, 1, 1, 0, 1, 0),
          counts(dlq.id, T + M, 0, 0, 0, 0, 3),
        ]),
        'counts: summed per queue and minute; a minute with only a depth is no row',
      );
      assert.deepEqual(await store().activity.counts(T + M, T + M, [dlq.id]), [counts(dlq.id, T + M, 0, 0, 0, 0, 3)]);
      assert.deepEqual(
        byQueueAndMinute(
          (await store().activity.counts(T + M, T + 2 * M)).filter((c) => c.queueId === src.id || c.queueId === dlq.id),
        ),
        byQueueAndMinute([counts(src.id, T + M, 1, 1, 0, 1, 0), counts(dlq.id, T + M, 0, 0, 0, 0, 3)]),
        'without ids: every queue',
      );

      assert.ok((await store().activity.prune(T + M)) >= 2);
      assert.deepEqual(
        (await store().activity.minutes(src.id, T - M, T + 2 * M)).map((m) => m.minute),
        [T + M],
        'older minutes are pruned',
      );
    });

    test('breakdown: dead-lettered messages by source and latest reason, with first and last times; other messages do not count', async () => {
      const a = await makeQueue(store());
      const b = await makeQueue(store());
      const dlq = await makeQueue(store());
      await store().messages.send(a.id, [newMessage(T), newMessage(T), newMessage(T)]);
      await store().messages.send(b.id, [newMessage(T)]);
      await store().messages.send(dlq.id, [newMessage(T, { body: 'sent straight to the DLQ' })]);
      await store().messages.receive(a.id, receiveRequest(T + 10, { max: 2, visibilityTimeoutMs: 0 }));
      // The two received before are dead-lettered; the third is received, and then rejected.
      const [held] = (
        await store().messages.receive(a.id, receiveRequest(T + 20, { max: 10, deadLetter: rule(dlq, a, T + 20) }))
      ).messages;
      assert.ok(held, 'the third message is received');
      const rejected = await store().deadLetters.reject(
        a.id,
        { seq: held.seq, token: held.receiptToken! },
        T + 40,
        target(dlq, a, 'rejected', T + 40),
      );
      assert.equal(rejected.outcome, 'ok');
      await store().messages.receive(b.id, receiveRequest(T + 50, { visibilityTimeoutMs: 0 }));
      await store().messages.receive(b.id, receiveRequest(T + 60, { deadLetter: rule(dlq, b, T + 60) }));

      const rows = (await store().deadLetters.breakdown(dlq.id)).sort((x, y) =>
        `${x.sourceArn}${x.reason}`.localeCompare(`${y.sourceArn}${y.reason}`),
      );
      assert.deepEqual(
        rows,
        [
          { sourceArn: `arn:${a.name}`, reason: 'delivery_limit', count: 2, oldest: T + 20, newest: T + 20 },
          { sourceArn: `arn:${a.name}`, reason: 'rejected', count: 1, oldest: T + 40, newest: T + 40 },
          { sourceArn: `arn:${b.name}`, reason: 'delivery_limit', count: 1, oldest: T + 60, newest: T + 60 },
        ].sort((x, y) => `${x.sourceArn}${x.reason}`.localeCompare(`${y.sourceArn}${y.reason}`)),
      );
      assert.deepEqual(await store().deadLetters.breakdown(a.id), [], 'a source with no dead letters has none');
    });

    test('deleteByIds: deletes visible, in-flight and dead-lettered messages by id, only in that queue', async () => {
      const src = await makeQueue(store());
      const dlq = await makeQueue(store());
      const other = await makeQueue(store());
      const [visible, inflight, delayed] = [newMessage(T), newMessage(T), newMessage(T, { visibleAt: T + 60_000 })];
      await store().messages.send(src.id, [visible, inflight, delayed]);
      await store().messages.send(other.id, [newMessage(T, { messageId: visible.messageId })]);
      await store().messages.receive(src.id, receiveRequest(T + 1, { max: 2 }));
      const gone = await store().messages.deleteByIds(
        src.id,
        [visible.messageId, inflight.messageId, delayed.messageId, 'no-such-id'],
        T + 2,
      );
      assert.deepEqual(gone, [visible.messageId, inflight.messageId, delayed.messageId]);
      assert.deepEqual(await messageCounts(store().messages, src.id, T + 2), { visible: 0, inflight: 0, delayed: 0 });
      assert.equal(
        (await messageCounts(store().messages, other.id, T + 2)).visible,
        1,
        'the same id in another queue stays',
      );
      assert.deepEqual(
        await store().messages.deleteByIds(src.id, [visible.messageId], T + 3),
        [],
        'a second delete finds nothing',
      );

      const poison = newMessage(T);
      await store().messages.send(src.id, [poison]);
      await store().messages.receive(src.id, receiveRequest(T + 10, { visibilityTimeoutMs: 0 }));
      await store().messages.receive(src.id, receiveRequest(T + 20, { deadLetter: rule(dlq, src, T + 20) }));
      assert.deepEqual(await store().messages.deleteByIds(dlq.id, [poison.messageId], T + 30), [poison.messageId]);
      assert.deepEqual(await store().deadLetters.breakdown(dlq.id), []);
    });

    test('FIFO: deleting the held message by id releases its group', async () => {
      const q = await makeQueue(store(), { name: `del${Date.now()}.fifo`, fifo: true });
      const [first, second] = [
        newMessage(T, { groupId: 'g', dedupId: 'a' }),
        newMessage(T, { groupId: 'g', dedupId: 'b' }),
      ];
      await store().messages.send(q.id, [first, second]);
      const got = await store().messages.receive(q.id, receiveRequest(T + 1, { fifo: true, max: 1 }));
      assert.equal(got.messages[0]!.messageId, first.messageId);
      assert.equal(
        (await store().messages.receive(q.id, receiveRequest(T + 2, { fifo: true }))).messages.length,
        0,
        'the group is held',
      );
      await store().messages.deleteByIds(q.id, [first.messageId], T + 3);
      const next = await store().messages.receive(q.id, receiveRequest(T + 4, { fifo: true }));
      assert.deepEqual(
        next.messages.map((m) => m.messageId),
        [second.messageId],
      );
    });
  });
};

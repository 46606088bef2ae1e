import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { recordDeath } from '../../../src/engine/dead-letters/deaths.js';
import type { DeathReason, QueueRecord, StoredMessage } from '../../../src/engine/kernel/types.js';
import type { DeadLetterTarget, NewQueue, Store } from '../../../src/engine/store/store.js';
import { newQueue } from '../../../src/engine/store/queues.js';
import { makeQueue, newMessage, receiveRequest, useStore, type CaseGroup } from '../harness.js';

const T = 1_700_000_000_000;

/** A target recording each death as the engine does, optionally sending it elsewhere. */
function target(
  dlq: QueueRecord,
  source: QueueRecord,
  reason: DeathReason,
  opts: { expiresAt?: number; park?: NewQueue; text?: string } = {},
): DeadLetterTarget {
  return {
    queueId: dlq.id,
    reason,
    cyclesQueue: opts.park,
    arrival: (m: StoredMessage) => ({
      kind: opts.park !== undefined && m.body.startsWith('loop') ? 'cycle' : 'move',
      sentAt: m.sentAt,
      dedupId: m.dedupId,
      deadLetterSourceArn: `arn:${source.name}`,
      deaths: recordDeath(m.deaths, {
        queue: source.name,
        queueArn: `arn:${source.name}`,
        reason,
        time: T,
        rejectReason: opts.text,
      }),
      expiresAt: opts.expiresAt,
    }),
  };
}

async function peek(store: Store, q: QueueRecord): Promise<StoredMessage[]> {
  return store.messages.peek(q.id, 0, 1000);
}

const bodies = async (store: Store, q: QueueRecord) => (await peek(store, q)).map((m) => m.body);
const reasons = (m: StoredMessage | undefined) => m?.deaths?.map((d) => d.reason);

/**
 * Dead-letter reasons: rejection, expiry and length limits each dead-letter in one atomic
 * step, and every path records the death in the message's history.
 */
export const deathCases: CaseGroup = (open) => {
  describe('dead-letter reasons and history', () => {
    const store = useStore(open);

    test('a message keeps its history and expiry through send and peek', async () => {
      const q = await makeQueue(store());
      const deaths = recordDeath(undefined, {
        queue: 'a',
        queueArn: 'arn:a',
        reason: 'rejected',
        time: T,
        rejectReason: 'bad',
      });
      await store().messages.send(q.id, [newMessage(T, { body: 'h', deaths, expiresAt: T + 5000 })]);
      const [m] = await peek(store(), q);
      assert.deepEqual(m!.deaths, deaths);
      assert.equal(m!.expiresAt, T + 5000);
    });

    test('rejectMessage dead-letters the message of the current receipt, and only that, recording the death', async () => {
      const src = await makeQueue(store());
      const dlq = await makeQueue(store());
      await store().messages.send(src.id, [newMessage(T, { body: 'r', expiresAt: T + 60_000 })]);
      const [got] = (await store().messages.receive(src.id, receiveRequest(T, { max: 1, visibilityTimeoutMs: 1000 })))
        .messages;
      const ref = { seq: got!.seq, token: got!.receiptToken! };
      const t = target(dlq, src, 'rejected', { text: 'no good' });
      assert.equal((await store().deadLetters.reject(src.id, { ...ref, token: 'other' }, T + 1, t)).outcome, 'stale');
      assert.equal(
        (await store().deadLetters.reject(src.id, { ...ref, token: 'x'.repeat(16) }, T + 1, t)).outcome,
        'stale',
      );
      assert.equal(
        (await store().deadLetters.reject(src.id, ref, T + 1000, t)).outcome,
        'lapsed',
        'the receipt ends when the message is visible again',
      );
      assert.equal((await store().deadLetters.reject(src.id, ref, T + 40_000, t)).outcome, 'lapsed');
      assert.equal((await store().deadLetters.reject(src.id, ref, T + 1, t)).outcome, 'ok');
      assert.equal((await store().deadLetters.reject(src.id, ref, T + 2, t)).outcome, 'gone');
      const [moved] = await peek(store(), dlq);
      assert.equal(moved!.body, 'r');
      assert.equal(moved!.receiptToken, null);
      assert.equal(moved!.visibleAt, T + 1);
      assert.equal(moved!.deadLetteredAt, T + 1);
      assert.equal(moved!.expiresAt, undefined, 'the TTL is removed');
      assert.deepEqual(
        moved!.deaths!.map((d) => [d.reason, d.count, d.rejectReason]),
        [['rejected', 1, 'no good']],
      );
      assert.deepEqual(await bodies(store(), src), []);
    });

    test('a rejected FIFO message goes to the end of the dead-letter queue, behind what it holds', async () => {
      const src = await makeQueue(store(), { name: `f${Date.now()}a.fifo`, fifo: true });
      const dlq = await makeQueue(store(), { name: `f${Date.now()}b.fifo`, fifo: true });
      await store().messages.send(dlq.id, [newMessage(T, { body: 'already', groupId: 'g', dedupId: 'x' })]);
      await store().messages.send(src.id, [newMessage(T, { body: 'fifo', groupId: 'g', dedupId: 'y' })]);
      const [got] = (
        await store().messages.receive(src.id, receiveRequest(T, { max: 1, fifo: true, visibilityTimeoutMs: 1000 }))
      ).messages;
      assert.equal(
        (
          await store().deadLetters.reject(
            src.id,
            { seq: got!.seq, token: got!.receiptToken! },
            T + 1,
            target(dlq, src, 'rejected'),
          )
        ).outcome,
        'ok',
      );
      const inDlq = await peek(store(), dlq);
      assert.deepEqual(
        inDlq.map((m) => m.body),
        ['already', 'fifo'],
      );
      assert.ok(inDlq[1]!.seq > got!.seq, 'a new position');
      // A receive hands the group out in that order too.
      const received = await store().messages.receive(dlq.id, receiveRequest(T + 2, { fifo: true }));
      assert.deepEqual(
        received.messages.map((m) => m.body),
        ['already', 'fifo'],
      );
      assert.deepEqual(reasons(received.messages[1]), ['rejected']);
    });

    test('expireMessages moves due, ready messages in bounded batches, leaves the rest, and deletes without a target', async () => {
      const src = await makeQueue(store());
      const dlq = await makeQueue(store());
      // An in-flight message is expired only once it is back; a delayed one once it is visible.
      await store().messages.send(src.id, [newMessage(T, { body: 'held', expiresAt: T + 1000 })]);
      await store().messages.receive(src.id, receiveRequest(T, { max: 1, visibilityTimeoutMs: 60_000 }));
      await store().messages.send(src.id, [
        newMessage(T, { body: 'late', expiresAt: T + 3000 }),
        newMessage(T, { body: 'first', expiresAt: T + 1000 }),
        newMessage(T, { body: 'second', expiresAt: T + 2000 }),
        newMessage(T, { body: 'forever' }),
        newMessage(T, { body: 'delayed', expiresAt: T + 10, visibleAt: T + 5000 }),
      ]);
      const t = target(dlq, src, 'expired', { expiresAt: T + 99_000 });
      assert.equal((await store().deadLetters.expire(src.id, T + 2500, 1, t)).length, 1);
      assert.deepEqual(await bodies(store(), dlq), ['first']);
      assert.equal((await store().deadLetters.expire(src.id, T + 2500, 10, t)).length, 1);
      assert.deepEqual((await bodies(store(), dlq)).sort(), ['first', 'second']);
      const moved = await peek(store(), dlq);
      assert.ok(
        moved.every((m) => m.expiresAt === T + 99_000),
        "the target's own TTL applies from arrival",
      );
      for (const m of moved) assert.deepEqual(reasons(m), ['expired']);
      assert.deepEqual((await bodies(store(), src)).sort(), ['delayed', 'forever', 'held', 'late']);
      // Without a target, what expired is deleted.
      const dropped = await store().deadLetters.expire(src.id, T + 3000, 10, undefined);
      assert.deepEqual(
        dropped.map((d) => [d.from, d.to, d.reason]),
        [[src.id, undefined, 'expired']],
        'reported as dropped',
      );
      assert.deepEqual(await bodies(store(), src), ['held', 'forever', 'delayed']);
      assert.deepEqual((await bodies(store(), dlq)).sort(), ['first', 'second']);
    });

    test('a message that closes a cycle is parked in the cycles queue, created in the same step and only then', async () => {
      const src = await makeQueue(store());
      const dlq = await makeQueue(store());
      const park = newQueue(
        { accountId: src.accountId, region: src.region, name: `cycles-${Date.now()}`, fifo: false, attributes: {} },
        T,
      );
      await store().messages.send(src.id, [newMessage(T, { body: 'fine', expiresAt: T })]);
      const first = await store().deadLetters.expire(src.id, T, 10, target(dlq, src, 'expired', { park }));
      assert.deepEqual(
        first.map((d) => [d.to, d.kind]),
        [[dlq.id, 'moved']],
      );
      assert.equal(await store().queues.get(park), undefined, 'no cycle, no cycles queue');
      await store().messages.send(src.id, [newMessage(T, { body: 'looping', expiresAt: T })]);
      const moves = await store().deadLetters.expire(src.id, T, 10, target(dlq, src, 'expired', { park }));
      const parking = await store().queues.get(park);
      assert.ok(parking, 'created with the move');
      assert.deepEqual(
        moves.map((d) => [d.from, d.to, d.reason, d.kind]),
        [[src.id, parking.id, 'expired', 'cycle']],
      );
      assert.deepEqual(await bodies(store(), dlq), ['fine']);
      assert.deepEqual(await bodies(store(), parking), ['looping']);
    });

    test('the receive path records the history it is given (delivery_limit)', async () => {
      const src = await makeQueue(store());
      const dlq = await makeQueue(store());
      await store().messages.send(src.id, [newMessage(T, { body: 'poison', expiresAt: T + 50_000 })]);
      const rule = { ...target(dlq, src, 'delivery_limit'), maxReceiveCount: 1 };
      await store().messages.receive(src.id, receiveRequest(T, { visibilityTimeoutMs: 0, deadLetter: rule }));
      const r = await store().messages.receive(
        src.id,
        receiveRequest(T + 1, { visibilityTimeoutMs: 0, deadLetter: rule }),
      );
      assert.equal(r.deadLettered.length, 1);
      const [moved] = await peek(store(), dlq);
      assert.deepEqual(
        moved!.deaths!.map((d) => [d.queue, d.reason, d.count]),
        [[src.name, 'delivery_limit', 1]],
      );
      assert.equal(moved!.expiresAt, undefined);
    });

    test('a FIFO receive path records the history too', async () => {
      const src = await makeQueue(store(), { name: `g${Date.now()}a.fifo`, fifo: true });
      const dlq = await makeQueue(store(), { name: `g${Date.now()}b.fifo`, fifo: true });
      await store().messages.send(src.id, [newMessage(T, { body: 'poison', groupId: 'g', dedupId: 'p' })]);
      const rule = { ...target(dlq, src, 'delivery_limit'), maxReceiveCount: 1 };
      await store().messages.receive(
        src.id,
        receiveRequest(T, { visibilityTimeoutMs: 0, deadLetter: rule, fifo: true }),
      );
      await store().messages.receive(
        src.id,
        receiveRequest(T + 1, { visibilityTimeoutMs: 0, deadLetter: rule, fifo: true }),
      );
      const [moved] = await peek(store(), dlq);
      assert.equal(moved!.deaths![0]!.reason, 'delivery_limit');
    });

    test('a length limit with drop-head dead-letters the oldest ready message in the send', async () => {
      const src = await makeQueue(store());
      const dlq = await makeQueue(store());
      // A backlog from before the limit is counted once, on the first limited send.
      await store().messages.send(src.id, [newMessage(T, { body: 'm1' }), newMessage(T + 1, { body: 'm2' })]);
      const limit = { maxMessages: 2, overflow: 'drop-head' as const, deadLetter: target(dlq, src, 'maxlen') };
      const {
        messages: [sent],
        deadLettered,
      } = await store().messages.send(src.id, [newMessage(T + 2, { body: 'm3' })], limit);
      assert.equal(sent!.rejected, undefined);
      assert.deepEqual(
        deadLettered.map((d) => [d.from, d.to, d.reason]),
        [[src.id, dlq.id, 'maxlen']],
        'the send reports what it pushed out',
      );
      assert.deepEqual(await bodies(store(), src), ['m2', 'm3']);
      assert.deepEqual(await bodies(store(), dlq), ['m1']);
      assert.deepEqual(reasons((await peek(store(), dlq))[0]), ['maxlen']);
      // A batch pushes out as many as it needs.
      await store().messages.send(
        src.id,
        [newMessage(T + 3, { body: 'm4' }), newMessage(T + 3, { body: 'm5' })],
        limit,
      );
      assert.deepEqual(await bodies(store(), src), ['m4', 'm5']);
      assert.deepEqual(await bodies(store(), dlq), ['m1', 'm2', 'm3']);
    });

    test('drop-head never drops a message in flight or delayed: with none ready, the send is rejected', async () => {
      const q = await makeQueue(store());
      await store().messages.send(q.id, [newMessage(T, { body: 'busy' })]);
      await store().messages.receive(q.id, receiveRequest(T, { visibilityTimeoutMs: 30_000 }));
      await store().messages.send(q.id, [newMessage(T, { body: 'hidden', visibleAt: T + 10_000 })]);
      const {
        messages: [r],
      } = await store().messages.send(q.id, [newMessage(T + 1, { body: 'new' })], {
        maxMessages: 2,
        overflow: 'drop-head',
      });
      assert.equal(r!.rejected, true);
      assert.deepEqual(await bodies(store(), q), ['busy', 'hidden']);
    });

    test('reject-publish refuses what does not fit, by count or bytes, and the depth follows deletes', async () => {
      const q = await makeQueue(store());
      const limit = { maxMessages: 2, maxBytes: 10, overflow: 'reject-publish' as const };
      const { messages: out } = await store().messages.send(
        q.id,
        [newMessage(T, { body: 'aaaa' }), newMessage(T, { body: 'bbbb' }), newMessage(T, { body: 'c' })],
        limit,
      );
      assert.deepEqual(
        out.map((m) => m.rejected ?? false),
        [false, false, true],
      );
      const got = await store().messages.receive(q.id, receiveRequest(T, { max: 1 }));
      await store().messages.delete(q.id, [{ seq: got.messages[0]!.seq, token: got.messages[0]!.receiptToken! }], {
        now: T,
        requireCurrent: false,
      });
      const {
        messages: [big],
      } = await store().messages.send(q.id, [newMessage(T, { body: 'ééééé' })], limit);
      assert.equal(big!.rejected, true, '4 + 10 bytes is over 10');
      const {
        messages: [small],
      } = await store().messages.send(q.id, [newMessage(T, { body: 'éé' })], limit);
      assert.equal(small!.rejected, undefined);
      assert.equal((await peek(store(), q)).length, 2);
    });

    test('limits of different kinds on one queue share its depth: reject-publish, then drop-head, then bytes after a delete', async () => {
      const q = await makeQueue(store());
      const dlq = await makeQueue(store());
      const reject = { maxMessages: 2, overflow: 'reject-publish' as const };
      const { messages: sent } = await store().messages.send(
        q.id,
        [1, 2, 3].map((i) => newMessage(T + i, { body: `r${i}` })),
        reject,
      );
      assert.deepEqual(
        sent.map((m) => m.rejected ?? false),
        [false, false, true],
      );
      assert.deepEqual(await bodies(store(), q), ['r1', 'r2']);
      const dropHead = { maxMessages: 2, overflow: 'drop-head' as const, deadLetter: target(dlq, q, 'maxlen') };
      const { messages: more } = await store().messages.send(q.id, [newMessage(T + 10, { body: 'd1' })], dropHead);
      assert.equal(more[0]!.rejected, undefined);
      assert.deepEqual(await bodies(store(), q), ['r2', 'd1']);
      assert.deepEqual(await bodies(store(), dlq), ['r1']);
      assert.deepEqual(reasons((await peek(store(), dlq))[0]), ['maxlen']);
      // Bytes count too, and a deleted message frees its room.
      const [r2] = (await store().messages.receive(q.id, receiveRequest(T + 20, { max: 1 }))).messages;
      await store().messages.delete(q.id, [{ seq: r2!.seq, token: r2!.receiptToken! }], {
        now: T + 20,
        requireCurrent: false,
      });
      const { messages: bytes } = await store().messages.send(
        q.id,
        [newMessage(T + 30, { body: 'xx' }), newMessage(T + 30, { body: 'yyyy' })],
        { maxBytes: 6, overflow: 'reject-publish' },
      );
      assert.deepEqual(
        bytes.map((m) => m.rejected ?? false),
        [false, true],
        'd1 (2 bytes) + xx fit in 6; yyyy does not',
      );
    });

    test('a message moved into a limited queue counts towards its depth', async () => {
      const src = await makeQueue(store());
      const dlq = await makeQueue(store());
      await store().messages.send(dlq.id, [newMessage(T, { body: 'd1' })], {
        maxMessages: 2,
        overflow: 'reject-publish',
      });
      await store().messages.send(src.id, [newMessage(T, { body: 'x', expiresAt: T })]);
      await store().deadLetters.expire(src.id, T, 10, target(dlq, src, 'expired'));
      const {
        messages: [r],
      } = await store().messages.send(dlq.id, [newMessage(T, { body: 'd2' })], {
        maxMessages: 2,
        overflow: 'reject-publish',
      });
      assert.equal(r!.rejected, true);
    });
  });
};

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { recordDeath } from '../../../src/engine/deaths.js';
import type { DeathReason, QueueRecord, StoredMessage } from '../../../src/engine/types.js';
import type { DeadLetterTarget, Store } from '../../../src/engine/store/store.js';
import { makeQueue, newMessage, receiveRequest, useStore, type CaseGroup } from '../harness.js';

const T = 1_700_000_000_000;

/** A target recording each death as the engine does, optionally sending it elsewhere. */
function target(dlq: QueueRecord, source: QueueRecord, reason: DeathReason, opts: { expiresAt?: number; divertTo?: QueueRecord; text?: string } = {}): DeadLetterTarget {
  return {
    queueId: dlq.id,
    patch: (m: StoredMessage) => ({
      sentAt: m.sentAt, dedupId: m.dedupId, deadLetterSourceArn: `arn:${source.name}`,
      deaths: recordDeath(m.deaths, { queue: source.name, queueArn: `arn:${source.name}`, reason, time: T, rejectReason: opts.text }),
      expiresAt: opts.expiresAt, queueId: opts.divertTo?.id,
    }),
  };
}

async function peek(store: Store, q: QueueRecord): Promise<StoredMessage[]> {
  return store.messages.peek(q.id, 0, 1000);
}

const bodies = async (store: Store, q: QueueRecord) => (await peek(store, q)).map((m) => m.body);

export const deathCases: CaseGroup = (open) => {
  describe('dead-letter reasons and history', () => {
    const store = useStore(open);

    test('a message keeps its history and expiry through send and peek', async () => {
      const q = await makeQueue(store());
      const deaths = recordDeath(undefined, { queue: 'a', queueArn: 'arn:a', reason: 'rejected', time: T, rejectReason: 'bad' });
      await store().messages.send(q.id, [newMessage(T, { body: 'h', deaths, expiresAt: T + 5000 })]);
      const [m] = await peek(store(), q);
      assert.deepEqual(m!.deaths, deaths);
      assert.equal(m!.expiresAt, T + 5000);
    });

    test('rejectMessage dead-letters the message of the current receipt, and only that', async () => {
      const src = await makeQueue(store());
      const dlq = await makeQueue(store());
      await store().messages.send(src.id, [newMessage(T, { body: 'r', expiresAt: T + 60_000 })]);
      const [got] = (await store().messages.receive(src.id, receiveRequest(T, { max: 1 }))).messages;
      const t = target(dlq, src, 'rejected', { text: 'no good' });
      assert.equal(await store().deadLetters.reject(src.id, { seq: got!.seq, token: 'other' }, T + 1, t), 'stale');
      assert.equal(await store().deadLetters.reject(src.id, { seq: got!.seq, token: got!.receiptToken! }, T + 40_000, t), 'expired');
      assert.equal(await store().deadLetters.reject(src.id, { seq: got!.seq, token: got!.receiptToken! }, T + 1, t), 'ok');
      assert.equal(await store().deadLetters.reject(src.id, { seq: got!.seq, token: got!.receiptToken! }, T + 1, t), 'gone');
      const [moved] = await peek(store(), dlq);
      assert.equal(moved!.body, 'r');
      assert.equal(moved!.receiptToken, null);
      assert.equal(moved!.visibleAt, T + 1);
      assert.equal(moved!.expiresAt, undefined, 'the TTL is removed');
      assert.deepEqual(moved!.deaths!.map((d) => [d.reason, d.count, d.rejectReason]), [['rejected', 1, 'no good']]);
      assert.deepEqual(await bodies(store(), src), []);
    });

    test('a rejected FIFO message goes to the end of the dead-letter queue', async () => {
      const src = await makeQueue(store(), { name: `f${Date.now()}a.fifo`, fifo: true });
      const dlq = await makeQueue(store(), { name: `f${Date.now()}b.fifo`, fifo: true });
      await store().messages.send(dlq.id, [newMessage(T, { body: 'already', groupId: 'g', dedupId: 'x' })]);
      await store().messages.send(src.id, [newMessage(T, { body: 'fifo', groupId: 'g', dedupId: 'y' })]);
      const [got] = (await store().messages.receive(src.id, receiveRequest(T, { max: 1, fifo: true }))).messages;
      assert.equal(await store().deadLetters.reject(src.id, { seq: got!.seq, token: got!.receiptToken! }, T + 1, target(dlq, src, 'rejected')), 'ok');
      const inDlq = await peek(store(), dlq);
      assert.deepEqual(inDlq.map((m) => m.body), ['already', 'fifo']);
      assert.ok(inDlq[1]!.seq > got!.seq, 'a new position');
      assert.equal(inDlq[1]!.deaths![0]!.reason, 'rejected');
    });

    test('expireMessages moves due, ready messages in bounded batches and leaves the rest', async () => {
      const src = await makeQueue(store());
      const dlq = await makeQueue(store());
      // An in-flight message is expired only once it is back.
      await store().messages.send(src.id, [newMessage(T, { body: 'held', expiresAt: T + 1000 })]);
      await store().messages.receive(src.id, receiveRequest(T, { max: 1, visibilityTimeoutMs: 60_000 }));
      await store().messages.send(src.id, [
        newMessage(T, { body: 'late', expiresAt: T + 3000 }),
        newMessage(T, { body: 'first', expiresAt: T + 1000 }),
        newMessage(T, { body: 'second', expiresAt: T + 2000 }),
        newMessage(T, { body: 'forever' }),
      ]);
      const t = target(dlq, src, 'expired', { expiresAt: T + 99_000 });
      assert.equal(await store().deadLetters.expire(src.id, T + 2500, 1, t), 1);
      assert.deepEqual(await bodies(store(), dlq), ['first']);
      assert.equal(await store().deadLetters.expire(src.id, T + 2500, 10, t), 1);
      assert.deepEqual((await bodies(store(), dlq)).sort(), ['first', 'second']);
      const moved = await peek(store(), dlq);
      assert.ok(moved.every((m) => m.expiresAt === T + 99_000), "the target's own TTL applies from arrival");
      assert.ok(moved.every((m) => m.deaths?.[0]?.reason === 'expired'));
      assert.deepEqual((await bodies(store(), src)).sort(), ['forever', 'held', 'late']);
    });

    test('expireMessages without a target deletes what expired', async () => {
      const q = await makeQueue(store());
      await store().messages.send(q.id, [newMessage(T, { body: 'gone', expiresAt: T + 10 }), newMessage(T, { body: 'stays' })]);
      assert.equal(await store().deadLetters.expire(q.id, T + 10, 10, undefined), 1);
      assert.deepEqual(await bodies(store(), q), ['stays']);
    });

    test('a patch may divert a message to another queue (a broken cycle)', async () => {
      const src = await makeQueue(store());
      const dlq = await makeQueue(store());
      const parking = await makeQueue(store());
      await store().messages.send(src.id, [newMessage(T, { body: 'looping', expiresAt: T })]);
      assert.equal(await store().deadLetters.expire(src.id, T, 10, target(dlq, src, 'expired', { divertTo: parking })), 1);
      assert.deepEqual(await bodies(store(), dlq), []);
      assert.deepEqual(await bodies(store(), parking), ['looping']);
    });

    test('the receive path records the history it is given (delivery_limit)', async () => {
      const src = await makeQueue(store());
      const dlq = await makeQueue(store());
      await store().messages.send(src.id, [newMessage(T, { body: 'poison', expiresAt: T + 50_000 })]);
      const rule = { ...target(dlq, src, 'delivery_limit'), maxReceiveCount: 1 };
      await store().messages.receive(src.id, receiveRequest(T, { visibilityTimeoutMs: 0, deadLetter: rule }));
      const r = await store().messages.receive(src.id, receiveRequest(T + 1, { visibilityTimeoutMs: 0, deadLetter: rule }));
      assert.equal(r.deadLettered, 1);
      const [moved] = await peek(store(), dlq);
      assert.deepEqual(moved!.deaths!.map((d) => [d.queue, d.reason, d.count]), [[src.name, 'delivery_limit', 1]]);
      assert.equal(moved!.expiresAt, undefined);
    });

    test('a FIFO receive path records the history too', async () => {
      const src = await makeQueue(store(), { name: `g${Date.now()}a.fifo`, fifo: true });
      const dlq = await makeQueue(store(), { name: `g${Date.now()}b.fifo`, fifo: true });
      await store().messages.send(src.id, [newMessage(T, { body: 'poison', groupId: 'g', dedupId: 'p' })]);
      const rule = { ...target(dlq, src, 'delivery_limit'), maxReceiveCount: 1 };
      await store().messages.receive(src.id, receiveRequest(T, { visibilityTimeoutMs: 0, deadLetter: rule, fifo: true }));
      await store().messages.receive(src.id, receiveRequest(T + 1, { visibilityTimeoutMs: 0, deadLetter: rule, fifo: true }));
      const [moved] = await peek(store(), dlq);
      assert.equal(moved!.deaths![0]!.reason, 'delivery_limit');
    });

    test('a length limit with drop-head dead-letters the oldest ready message in the send', async () => {
      const src = await makeQueue(store());
      const dlq = await makeQueue(store());
      // A backlog from before the limit is counted once, on the first limited send.
      await store().messages.send(src.id, [newMessage(T, { body: 'm1' }), newMessage(T + 1, { body: 'm2' })]);
      const limit = { maxMessages: 2, overflow: 'drop-head' as const, deadLetter: target(dlq, src, 'maxlen') };
      const [sent] = await store().messages.send(src.id, [newMessage(T + 2, { body: 'm3' })], limit);
      assert.equal(sent!.rejected, undefined);
      assert.deepEqual(await bodies(store(), src), ['m2', 'm3']);
      assert.deepEqual(await bodies(store(), dlq), ['m1']);
      assert.equal((await peek(store(), dlq))[0]!.deaths![0]!.reason, 'maxlen');
      // A batch pushes out as many as it needs.
      await store().messages.send(src.id, [newMessage(T + 3, { body: 'm4' }), newMessage(T + 3, { body: 'm5' })], limit);
      assert.deepEqual(await bodies(store(), src), ['m4', 'm5']);
      assert.deepEqual(await bodies(store(), dlq), ['m1', 'm2', 'm3']);
    });

    test('drop-head never drops a message in flight: with none ready, the send is rejected', async () => {
      const q = await makeQueue(store());
      await store().messages.send(q.id, [newMessage(T, { body: 'busy' })]);
      await store().messages.receive(q.id, receiveRequest(T, { visibilityTimeoutMs: 30_000 }));
      const [r] = await store().messages.send(q.id, [newMessage(T + 1, { body: 'new' })], { maxMessages: 1, overflow: 'drop-head' });
      assert.equal(r!.rejected, true);
      assert.deepEqual(await bodies(store(), q), ['busy']);
    });

    test('reject-publish refuses what does not fit, by count or bytes, and the depth follows deletes', async () => {
      const q = await makeQueue(store());
      const limit = { maxMessages: 2, maxBytes: 10, overflow: 'reject-publish' as const };
      const out = await store().messages.send(q.id, [newMessage(T, { body: 'aaaa' }), newMessage(T, { body: 'bbbb' }), newMessage(T, { body: 'c' })], limit);
      assert.deepEqual(out.map((m) => m.rejected ?? false), [false, false, true]);
      const got = await store().messages.receive(q.id, receiveRequest(T, { max: 1 }));
      await store().messages.delete(q.id, [{ seq: got.messages[0]!.seq, token: got.messages[0]!.receiptToken! }], { now: T, requireCurrent: false });
      const [big] = await store().messages.send(q.id, [newMessage(T, { body: 'ééééé' })], limit);
      assert.equal(big!.rejected, true, '4 + 10 bytes is over 10');
      const [small] = await store().messages.send(q.id, [newMessage(T, { body: 'éé' })], limit);
      assert.equal(small!.rejected, undefined);
      assert.equal((await peek(store(), q)).length, 2);
    });

    test('a message moved into a limited queue counts towards its depth', async () => {
      const src = await makeQueue(store());
      const dlq = await makeQueue(store());
      await store().messages.send(dlq.id, [newMessage(T, { body: 'd1' })], { maxMessages: 2, overflow: 'reject-publish' });
      await store().messages.send(src.id, [newMessage(T, { body: 'x', expiresAt: T })]);
      await store().deadLetters.expire(src.id, T, 10, target(dlq, src, 'expired'));
      const [r] = await store().messages.send(dlq.id, [newMessage(T, { body: 'd2' })], { maxMessages: 2, overflow: 'reject-publish' });
      assert.equal(r!.rejected, true);
    });
  });
};

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Death, QueueRecord, StoredMessage } from '../../../src/engine/types.js';
import type { DeadLetterTarget } from '../../../src/engine/store/store.js';
import { makeQueue, newMessage, receiveRequest, useStore, type CaseGroup } from '../harness.js';

const T = 1_700_000_000_000;

/** A target that records each death in the history, as the engine's does. */
function target(dlq: QueueRecord, reason: Death['reason'], extra: { queueId?: number; expiresAt?: number } = {}): DeadLetterTarget {
  return {
    queueId: dlq.id,
    patch: (m: StoredMessage) => ({
      sentAt: m.sentAt, deadLetterSourceArn: `arn:${m.queueId}`, ...extra,
      deaths: [{ queue: `q${m.queueId}`, queueArn: `arn:${m.queueId}`, reason, count: 1, firstTime: T, lastTime: T }, ...(m.deaths ?? [])],
    }),
  };
}

async function bodies(store: { peekMessages(id: number, after: number, n: number): Promise<StoredMessage[]> }, q: QueueRecord) {
  return (await store.messages.peek(q.id, 0, 100)).map((m) => m.body);
}

/** Rejection, expiry and length limits: each dead-letters in one atomic step. */
export const deadLetterReasonCases: CaseGroup = (open) => {
  describe('dead-letter reasons', () => {
    const store = useStore(open);

    test('rejectMessage dead-letters the message of a current receipt, recording the death', async () => {
      const q = await makeQueue(store());
      const dlq = await makeQueue(store());
      await store().messages.send(q.id, [newMessage(T, { body: 'bad' })]);
      const [m] = (await store().messages.receive(q.id, receiveRequest(T, { visibilityTimeoutMs: 1000 }))).messages;
      const ref = { seq: m!.seq, token: m!.receiptToken! };
      assert.equal(await store().deadLetters.reject(q.id, { ...ref, token: 'x'.repeat(16) }, T + 1, target(dlq, 'rejected')), 'stale');
      assert.equal(await store().deadLetters.reject(q.id, ref, T + 1000, target(dlq, 'rejected')), 'expired');
      assert.equal(await store().deadLetters.reject(q.id, ref, T + 1, target(dlq, 'rejected')), 'ok');
      assert.equal(await store().deadLetters.reject(q.id, ref, T + 2, target(dlq, 'rejected')), 'gone');
      const [dead] = await store().messages.peek(dlq.id, 0, 10);
      assert.equal(dead!.body, 'bad');
      assert.equal(dead!.receiptToken, null);
      assert.equal(dead!.deadLetteredAt, T + 1);
      assert.deepEqual(dead!.deaths?.map((d) => d.reason), ['rejected']);
      assert.deepEqual(await bodies(store(), q), []);
    });

    test('expireMessages dead-letters due ready messages, leaves in-flight ones, and deletes without a target', async () => {
      const q = await makeQueue(store());
      const dlq = await makeQueue(store());
      await store().messages.send(q.id, [
        newMessage(T, { body: 'due', expiresAt: T + 10 }),
        newMessage(T, { body: 'later', expiresAt: T + 1000 }),
        newMessage(T, { body: 'never' }),
        newMessage(T, { body: 'held', expiresAt: T + 10, visibleAt: T + 5000 }),
      ]);
      assert.equal(await store().deadLetters.expire(q.id, T + 10, 100, target(dlq, 'expired', { expiresAt: T + 99 })), 1);
      const [dead] = await store().messages.peek(dlq.id, 0, 10);
      assert.equal(dead!.body, 'due');
      assert.equal(dead!.expiresAt, T + 99, "the target's own expiry replaces the message's");
      assert.deepEqual(dead!.deaths?.map((d) => d.reason), ['expired']);
      assert.equal(await store().deadLetters.expire(q.id, T + 1000, 100, undefined), 1);
      assert.deepEqual(await bodies(store(), q), ['never', 'held']);
    });

    test('a patch may send one message elsewhere than the target (a broken cycle)', async () => {
      const q = await makeQueue(store());
      const dlq = await makeQueue(store());
      const parking = await makeQueue(store());
      await store().messages.send(q.id, [newMessage(T, { body: 'cycled', expiresAt: T })]);
      await store().deadLetters.expire(q.id, T, 10, target(dlq, 'expired', { queueId: parking.id }));
      assert.deepEqual(await bodies(store(), dlq), []);
      assert.deepEqual(await bodies(store(), parking), ['cycled']);
    });

    test('FIFO messages are dead-lettered behind what the dead-letter queue holds', async () => {
      const q = await makeQueue(store(), { fifo: true });
      const dlq = await makeQueue(store(), { fifo: true });
      await store().messages.send(dlq.id, [newMessage(T, { groupId: 'g', body: 'old' })]);
      await store().messages.send(q.id, [newMessage(T, { groupId: 'g', body: 'new' })]);
      const [m] = (await store().messages.receive(q.id, receiveRequest(T, { fifo: true, visibilityTimeoutMs: 1000 }))).messages;
      assert.equal(await store().deadLetters.reject(q.id, { seq: m!.seq, token: m!.receiptToken! }, T + 1, target(dlq, 'rejected')), 'ok');
      const got = await store().messages.receive(dlq.id, receiveRequest(T + 2, { fifo: true }));
      assert.deepEqual(got.messages.map((x) => x.body), ['old', 'new']);
      assert.deepEqual(got.messages[1]!.deaths?.map((d) => d.reason), ['rejected']);
    });

    test('a length limit: reject-publish refuses what does not fit; drop-head pushes out the oldest ready', async () => {
      const q = await makeQueue(store());
      const dlq = await makeQueue(store());
      const reject = { maxMessages: 2, overflow: 'reject-publish' as const };
      const sent = await store().messages.send(q.id, [1, 2, 3].map((i) => newMessage(T + i, { body: `r${i}` })), reject);
      assert.deepEqual(sent.map((m) => m.rejected ?? false), [false, false, true]);
      assert.deepEqual(await bodies(store(), q), ['r1', 'r2']);
      const dropHead = { maxMessages: 2, overflow: 'drop-head' as const, deadLetter: target(dlq, 'maxlen') };
      const more = await store().messages.send(q.id, [newMessage(T + 10, { body: 'd1' })], dropHead);
      assert.equal(more[0]!.rejected, undefined);
      assert.deepEqual(await bodies(store(), q), ['r2', 'd1']);
      assert.deepEqual(await bodies(store(), dlq), ['r1']);
      assert.deepEqual((await store().messages.peek(dlq.id, 0, 1))[0]!.deaths?.map((d) => d.reason), ['maxlen']);
      // Bytes count too, and a deleted message frees its room.
      const [r2] = (await store().messages.receive(q.id, receiveRequest(T + 20, { max: 1 }))).messages;
      await store().messages.delete(q.id, [{ seq: r2!.seq, token: r2!.receiptToken! }], { now: T + 20, requireCurrent: false });
      const bytes = await store().messages.send(q.id, [newMessage(T + 30, { body: 'xx' }), newMessage(T + 30, { body: 'yyyy' })], { maxBytes: 6, overflow: 'reject-publish' });
      assert.deepEqual(bytes.map((m) => m.rejected ?? false), [false, true], 'd1 (2 bytes) + xx fit in 6; yyyy does not');
    });

    test('drop-head with nothing ready to drop refuses the message', async () => {
      const q = await makeQueue(store());
      await store().messages.send(q.id, [newMessage(T, { body: 'hidden', visibleAt: T + 10_000 })]);
      const [m] = await store().messages.send(q.id, [newMessage(T + 1, { body: 'new' })], { maxMessages: 1, overflow: 'drop-head' });
      assert.equal(m!.rejected, true);
      assert.deepEqual(await bodies(store(), q), ['hidden']);
    });
  });
};

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { DeadLetterArrival, DeadLetterTarget } from '../../../src/engine/store/dead-letters.js';
import type { QueueRecord, StoredMessage } from '../../../src/engine/kernel/types.js';
import { makeQueue, newMessage, receiveRequest, useStore, type CaseGroup } from '../harness.js';

const T = 1_700_000_000_000;
const ENVELOPE = (x: string) => ({ RedriveAmqp: { DataType: 'String', StringValue: JSON.stringify({ x, k: 'key' }) } });

/**
 * An AMQP dead-letter exchange's target: the message is replaced by a copy in each of
 * `dests` (with its own expiry), and `cycles` more queues are left out as cycles.
 */
function copyTo(
  source: QueueRecord,
  dests: QueueRecord[],
  reason: DeadLetterTarget['reason'] = 'rejected',
  cycles = 0,
): DeadLetterTarget {
  let n = 0;
  return {
    queueId: source.id,
    reason,
    arrival: (m: StoredMessage): DeadLetterArrival => ({
      kind: 'copies',
      sentAt: T + 50,
      deadLetterSourceArn: `arn:${source.name}`,
      deaths: [
        {
          queue: source.name,
          queueArn: `arn:${source.name}`,
          reason,
          count: 1,
          firstTime: T + 50,
          lastTime: T + 50,
          exchange: '',
          routingKeys: ['key'],
        },
      ],
      copies: dests.map((d, i) => ({
        queueId: d.id,
        messageId: `${m.messageId}-copy-${++n}`,
        systemAttributes: ENVELOPE('dlx'),
        expiresAt: i === 0 ? T + 9_000 : undefined,
      })),
      cycles,
    }),
  };
}

export const deadLetterCopyCases: CaseGroup = (open) => {
  describe('dead-letter copies (AMQP dead-letter exchanges)', () => {
    const store = useStore(open);

    test('a rejection replaces the message by a copy in every destination, in one step', async () => {
      const src = await makeQueue(store());
      const [d1, d2] = [await makeQueue(store()), await makeQueue(store())];
      await store().messages.send(src.id, [newMessage(T, { body: 'fan', systemAttributes: ENVELOPE('orig') })]);
      const {
        messages: [m],
      } = await store().messages.receive(src.id, receiveRequest(T + 10));
      const r = await store().deadLetters.reject(
        src.id,
        { seq: m!.seq, token: m!.receiptToken! },
        T + 50,
        copyTo(src, [d1!, d2!]),
      );
      assert.equal(r.outcome, 'ok');
      assert.deepEqual(
        r.deadLettered.map((d) => [d.to, d.reason]),
        [
          [d1!.id, 'rejected'],
          [d2!.id, 'rejected'],
        ],
      );
      assert.equal((await store().messages.peek(src.id, 0, 10)).length, 0, 'the original is gone');
      for (const [i, d] of [d1!, d2!].entries()) {
        const copies = await store().messages.peek(d.id, 0, 10);
        assert.equal(copies.length, 1, `one copy in destination ${i}`);
        const c = copies[0]!;
        assert.equal(c.body, 'fan');
        assert.equal(c.messageId, r.deadLettered[i]!.messageId);
        assert.notEqual(c.messageId, m!.messageId, 'each copy is a new message');
        assert.deepEqual(c.systemAttributes, ENVELOPE('dlx'));
        assert.equal(c.deaths?.[0]?.reason, 'rejected');
        assert.deepEqual(c.deaths?.[0]?.routingKeys, ['key']);
        assert.equal(c.receiveCount, 1, 'a copy keeps the receive count, as an SQS dead letter does');
        assert.equal(c.firstReceivedAt, T + 10, 'and its first receive time');
        assert.equal(c.visibleAt, T + 50);
        assert.equal(c.deadLetterSourceArn, `arn:${src.name}`);
        assert.equal(c.receiptToken, null);
        assert.equal(c.expiresAt ?? undefined, i === 0 ? T + 9_000 : undefined);
      }
    });

    test('expiry with no destination drops the message; a left-out cycle is reported as one', async () => {
      const src = await makeQueue(store());
      await store().messages.send(src.id, [
        newMessage(T, { body: 'a', expiresAt: T + 5 }),
        newMessage(T, { body: 'b', expiresAt: T + 5 }),
      ]);
      const dropped = await store().deadLetters.expire(src.id, T + 10, 1, copyTo(src, [], 'expired'));
      assert.deepEqual(
        dropped.map((d) => [d.to, d.kind]),
        [[undefined, 'dropped']],
      );
      const cycled = await store().deadLetters.expire(src.id, T + 10, 10, copyTo(src, [], 'expired', 1));
      assert.deepEqual(
        cycled.map((d) => [d.to, d.kind]),
        [[undefined, 'cycle']],
      );
      assert.equal((await store().messages.peek(src.id, 0, 10)).length, 0);
    });

    test('drop-head copies what it pushes out to every destination', async () => {
      const src = await makeQueue(store());
      const [d1, d2] = [await makeQueue(store()), await makeQueue(store())];
      const limit = { maxMessages: 1, overflow: 'drop-head' as const, deadLetter: copyTo(src, [d1!, d2!], 'maxlen') };
      await store().messages.send(src.id, [newMessage(T, { body: 'old' })], limit);
      const { deadLettered } = await store().messages.send(src.id, [newMessage(T + 1, { body: 'new' })], limit);
      assert.equal(deadLettered.length, 2);
      assert.deepEqual(
        (await store().messages.peek(src.id, 0, 10)).map((m) => m.body),
        ['new'],
      );
      for (const d of [d1!, d2!])
        assert.deepEqual(
          (await store().messages.peek(d.id, 0, 10)).map((m) => m.body),
          ['old'],
        );
    });

    test('an arrival that fails leaves the message where it was and writes no copy', async () => {
      const src = await makeQueue(store());
      const d1 = await makeQueue(store());
      await store().messages.send(src.id, [
        newMessage(T, { body: 'keep', expiresAt: T + 5 }),
        newMessage(T, { body: 'keep2', expiresAt: T + 5 }),
      ]);
      const good = copyTo(src, [d1]);
      // The second message fails (every time: a store may run an arrival again when it retries).
      const failing: DeadLetterTarget = {
        ...good,
        arrival: (m) => {
          if (m.body === 'keep2') throw new Error('routing failed');
          return good.arrival(m);
        },
      };
      await assert.rejects(store().deadLetters.expire(src.id, T + 10, 10, failing), /routing failed/);
      assert.deepEqual((await store().messages.peek(src.id, 0, 10)).map((m) => m.body).sort(), ['keep', 'keep2']);
      assert.equal((await store().messages.peek(d1.id, 0, 10)).length, 0, 'the first copy was rolled back');
    });
  });
};

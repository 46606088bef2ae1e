import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { makeQueue, newMessage, receiveRequest, useStore, type CaseGroup } from '../harness.js';

const T = 1_700_000_000_000;
const attrs = (text: string) => ({ RedriveAmqp: { DataType: 'String', StringValue: text } });

export const envelopeCases: CaseGroup = (open) => {
  describe('envelopes (a held message rewritten)', () => {
    const store = useStore(open);

    test('only the current receipt rewrites; body, receive count and position stay', async () => {
      const q = await makeQueue(store());
      await store().messages.send(q.id, [
        newMessage(T + 1, { body: 'one', systemAttributes: attrs('{"x":"","k":"a"}') }),
        newMessage(T + 2, { body: 'two' }),
      ]);
      const first = await store().messages.receive(q.id, receiveRequest(T + 10, { max: 2 }));
      const [one, two] = first.messages;
      assert.ok(one && two);
      const done = await store().envelopes.rewrite(q.id, [
        { seq: one.seq, token: one.receiptToken!, systemAttributes: attrs('{"x":"","k":"b"}') },
        { seq: two.seq, token: 'not-its-receipt', systemAttributes: attrs('{"x":"","k":"c"}') },
        { seq: two.seq + 1000, token: two.receiptToken!, systemAttributes: attrs('{"x":"","k":"d"}') },
      ]);
      assert.deepEqual(done, [true, false, false], 'the held one, not a stale receipt nor a missing message');

      // Back to the queue at their positions (as a requeue sets them): read again, in order.
      await store().messages.changeVisibility(
        q.id,
        first.messages.map((m) => ({
          seq: m.seq,
          token: m.receiptToken!,
          visibilityTimeoutMs: -1,
          maxSinceReceiveMs: Number.MAX_SAFE_INTEGER,
          requireCurrent: true,
        })),
        T + 20,
      );
      const again = await store().messages.receive(q.id, receiveRequest(T + 30, { max: 2 }));
      assert.deepEqual(
        again.messages.map((m) => [m.body, m.receiveCount, m.systemAttributes?.RedriveAmqp?.StringValue]),
        [
          ['one', 2, '{"x":"","k":"b"}'],
          ['two', 2, undefined],
        ],
      );

      // The first receipt is no longer current once the message was delivered again.
      assert.deepEqual(
        await store().envelopes.rewrite(q.id, [
          { seq: one.seq, token: one.receiptToken!, systemAttributes: attrs('{"x":"","k":"e"}') },
        ]),
        [false],
      );
      assert.deepEqual(await store().envelopes.rewrite(q.id, []), []);
    });
  });
};

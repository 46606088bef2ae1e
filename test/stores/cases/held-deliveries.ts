import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { holderPrefix } from '../../../src/engine/store/held-deliveries.js';
import { makeQueue, newMessage, receiveRequest, useStore, type CaseGroup } from '../harness.js';

const T = 1_700_000_000_000;
const SELF = 'aaaaaaaaaaaaaaaa';
const GONE = 'bbbbbbbbbbbbbbbb';

export const heldDeliveryCases: CaseGroup = (open) => {
  describe('held deliveries (AMQP redelivery after a crash)', () => {
    const store = useStore(open);

    test("a gone holder's deliveries return at their position with their receive counts; this process's stay, SQS receives stay", async () => {
      await store().heldDeliveries.register(SELF, T);
      const q = await makeQueue(store());
      await store().messages.send(
        q.id,
        [1, 2, 3, 4].map((i) => newMessage(T + i)),
      );
      let n = 0;
      const gone = await store().messages.receive(
        q.id,
        receiveRequest(T + 10, { max: 2, newToken: () => `${holderPrefix(GONE)}${++n}` }),
      );
      const mine = await store().messages.receive(
        q.id,
        receiveRequest(T + 10, { max: 1, newToken: () => `${holderPrefix(SELF)}${++n}` }),
      );
      const sqs = await store().messages.receive(q.id, receiveRequest(T + 10, { max: 1 }));
      assert.deepEqual([gone.messages.length, mine.messages.length, sqs.messages.length], [2, 1, 1]);

      assert.deepEqual(await store().heldDeliveries.release(SELF, T + 20), { alive: true }, 'this process is alive');
      const r = await store().heldDeliveries.release(GONE, T + 20);
      assert.deepEqual(r, { alive: false, released: [{ queueId: q.id, count: 2 }] });
      const again = await store().messages.receive(q.id, receiveRequest(T + 30));
      assert.deepEqual(
        again.messages.map((m) => [m.messageId, m.receiveCount]),
        gone.messages.map((m) => [m.messageId, 2]),
        "only the gone holder's, first (their original position), delivered a second time",
      );
      assert.deepEqual(
        await store().heldDeliveries.release(GONE, T + 40),
        { alive: false, released: [] },
        'released once',
      );
    });
  });
};

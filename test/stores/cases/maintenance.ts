import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { makeQueue, newMessage, useStore, type CaseGroup } from '../harness.js';

const T = 1_700_000_000_000;

export const maintenanceCases: CaseGroup = (open) => {
  describe('maintenance', () => {
    const store = useStore(open);

    test('ready resolves on a healthy store, alongside writes, and changes nothing visible', async () => {
      const q = await makeQueue(store());
      // The check and sends in the same turn (on SQLite: the same group commit).
      const [, sent] = await Promise.all([
        store().maintenance.ready(),
        store().messages.send(q.id, [newMessage(T), newMessage(T)]),
        store().maintenance.ready(),
      ]);
      assert.equal(sent.messages.length, 2);
      await store().maintenance.ready();
      assert.deepEqual(
        (await store().messages.peek(q.id, 0, 10)).map((m) => m.body),
        sent.messages.map((m) => m.body),
      );
      assert.equal((await store().queues.get(q))?.id, q.id);
    });
  });
};

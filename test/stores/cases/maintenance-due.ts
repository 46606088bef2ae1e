import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { makeQueue, newMessage, useStore, type CaseGroup } from '../harness.js';

const RULE = { attribute: 'MessageRetentionPeriod', defaultSeconds: 345_600 };

/** What is due, asked across every queue at once (one query however many queues there are, so an idle server with many queues costs little). */
export const dueCases: CaseGroup = (open) => {
  describe('maintenance: what is due', () => {
    const store = useStore(open);

    test('retentionDue orders the queues with messages by when their oldest passes retention', async () => {
      const t = 1_700_000_000_000;
      const short = await makeQueue(store(), { attributes: { MessageRetentionPeriod: '60' } });
      const long = await makeQueue(store(), { attributes: { MessageRetentionPeriod: '3600' } });
      const fallback = await makeQueue(store(), { attributes: {} });
      await makeQueue(store(), { attributes: { MessageRetentionPeriod: '60' } }); // empty: never due
      await store().messages.send(short.id, [newMessage(t + 5_000), newMessage(t + 9_000)]);
      await store().messages.send(long.id, [newMessage(t)]);
      await store().messages.send(fallback.id, [newMessage(t + 1)]);
      const due = (await store().maintenance.retentionDue(RULE, 10)).filter((d) =>
        [short.id, long.id, fallback.id].includes(d.queueId),
      );
      assert.deepEqual(due, [
        { queueId: short.id, dueAt: t + 5_000 + 60_000 },
        { queueId: long.id, dueAt: t + 3_600_000 },
        { queueId: fallback.id, dueAt: t + 1 + 345_600_000 },
      ]);
      assert.equal((await store().maintenance.retentionDue(RULE, 1)).length, 1, 'limited');
    });

    test('expiryDue names only the queues with a ready message past its time-to-live', async () => {
      const t = 1_800_000_000_000;
      const expired = await makeQueue(store());
      const inFlight = await makeQueue(store());
      const later = await makeQueue(store());
      await store().messages.send(expired.id, [
        newMessage(t, { expiresAt: t + 1_000 }),
        newMessage(t, { expiresAt: t + 2_000 }),
      ]);
      await store().messages.send(inFlight.id, [newMessage(t, { expiresAt: t + 1_000, visibleAt: t + 60_000 })]);
      await store().messages.send(later.id, [newMessage(t, { expiresAt: t + 10_000 })]);
      const ours = (ids: number[]) => ids.filter((id) => [expired.id, inFlight.id, later.id].includes(id));
      assert.deepEqual(ours(await store().maintenance.expiryDue(t + 5_000, 100)), [expired.id]);
      assert.deepEqual(ours(await store().maintenance.expiryDue(t + 500, 100)), []);
      assert.deepEqual(
        ours(await store().maintenance.expiryDue(t + 60_000, 100)).sort((a, b) => a - b),
        [expired.id, inFlight.id, later.id],
      );
    });
  });
};

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { makeQueue, useStore, type CaseGroup } from '../harness.js';

export const queueCases: CaseGroup = (open) => {
  describe('queues', () => {
    const store = useStore(open);

    test('createQueue inserts once and returns the stored queue the second time', async () => {
      const a = await makeQueue(store(), { name: 'same-name' });
      const again = await store().queues.create({ ...a, attributes: { VisibilityTimeout: '99' } });
      assert.equal(again.created, false);
      assert.equal(again.queue.id, a.id);
      assert.equal(again.queue.attributes.VisibilityTimeout, '30');
    });

    test('queues are found by account and name, and by id', async () => {
      const q = await makeQueue(store(), { name: 'findme', accountId: '111111111111' });
      assert.equal((await store().queues.get('111111111111', 'findme'))?.id, q.id);
      assert.equal(await store().queues.get('000000000000', 'findme'), undefined);
      assert.equal((await store().queues.byId(q.id))?.name, 'findme');
    });

    test('listQueues filters by prefix, orders by name and pages after a name', async () => {
      for (const n of ['pfx-c', 'pfx-a', 'pfx-b', 'other']) await makeQueue(store(), { name: n, accountId: '222222222222' });
      const all = await store().queues.list('222222222222', 'pfx-', undefined, 10);
      assert.deepEqual(all.map((q) => q.name), ['pfx-a', 'pfx-b', 'pfx-c']);
      const page = await store().queues.list('222222222222', 'pfx-', 'pfx-a', 1);
      assert.deepEqual(page.map((q) => q.name), ['pfx-b']);
    });

    test('updateQueue merges and removes attributes and tags', async () => {
      const q = await makeQueue(store(), { tags: { a: '1', b: '2' } });
      const u = await store().queues.update(q.id, {
        setAttributes: { DelaySeconds: '5' }, removeAttributes: ['VisibilityTimeout'],
        setTags: { c: '3' }, removeTags: ['a'], modifiedAt: 42,
      });
      assert.deepEqual(u?.attributes, { DelaySeconds: '5' });
      assert.deepEqual(u?.tags, { b: '2', c: '3' });
      assert.equal((await store().queues.byId(q.id))?.modifiedAt, 42);
      assert.equal(await store().queues.update(987654321, { modifiedAt: 1 }), undefined);
    });

    test('deleteQueue removes the queue and a re-created queue gets a new id', async () => {
      const q = await makeQueue(store(), { name: 'recreated' });
      assert.equal(await store().queues.delete(q.id), true);
      assert.equal(await store().queues.byId(q.id), undefined);
      assert.equal(await store().queues.delete(q.id), false);
      const again = await makeQueue(store(), { name: 'recreated' });
      assert.notEqual(again.id, q.id);
    });

    test('purgeQueue allows one purge per cooldown', async () => {
      const q = await makeQueue(store());
      assert.equal(await store().queues.purge(q.id, 1000, 60_000), true);
      assert.equal(await store().queues.purge(q.id, 30_000, 60_000), false);
      assert.equal(await store().queues.purge(q.id, 61_000, 60_000), true);
    });

    test('allQueues lists queues of every account', async () => {
      const a = await makeQueue(store(), { accountId: '333333333333' });
      const ids = (await store().queues.all()).map((q) => q.id);
      assert.ok(ids.includes(a.id));
    });
  });
};

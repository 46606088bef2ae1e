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

    test('every queue is listed, including one created, changed or deleted after an earlier listing', async () => {
      const names = async () =>
        (await store().queues.all())
          .filter((q) => q.accountId === '444444444444')
          .map((q) => `${q.name}:${q.attributes.DelaySeconds ?? ''}`)
          .sort();
      const a = await makeQueue(store(), { name: 'all-a', accountId: '444444444444' });
      assert.deepEqual(await names(), ['all-a:']);
      const b = await makeQueue(store(), { name: 'all-b', accountId: '444444444444' });
      assert.deepEqual(await names(), ['all-a:', 'all-b:'], 'a creation shows at once');
      await store().queues.update(a.id, { setAttributes: { DelaySeconds: '5' } });
      assert.deepEqual(await names(), ['all-a:5', 'all-b:'], 'a change shows at once');
      await store().queues.delete(b.id);
      assert.deepEqual(await names(), ['all-a:5'], 'a deletion shows at once');
    });

    test("one account's changes leave another account's listed records as they were", async () => {
      const mine = await makeQueue(store(), { name: 'steady', accountId: '666666666666' });
      const theirs = await makeQueue(store(), { name: 'churn', accountId: '777777777777' });
      const record = async (id: number) => (await store().queues.all()).find((q) => q.id === id);
      const before = await record(mine.id);
      await store().queues.update(theirs.id, { setAttributes: { DelaySeconds: '3' } });
      await makeQueue(store(), { name: 'churn-2', accountId: '777777777777' });
      // Readers at the same time (the overview reads twice at once) all see the change.
      const [all, again] = await Promise.all([store().queues.all(), store().queues.all()]);
      assert.equal(all.find((q) => q.id === theirs.id)?.attributes.DelaySeconds, '3');
      assert.equal(again.find((q) => q.id === theirs.id)?.attributes.DelaySeconds, '3');
      assert.deepEqual(
        all.map((q) => q.id),
        all.map((q) => q.id).sort((a, b) => a - b),
        'in id order',
      );
      // The engine keeps settings per record: an unchanged queue must stay the same object
      // (where the store holds records at all; PostgreSQL only while it listens for changes).
      if (store().kind !== 'postgres') assert.equal(await record(mine.id), before, 'the same record');
      else assert.deepEqual(await record(mine.id), before);
    });

    test('a queue held in memory (cached, optional) is never stale: a change or deletion drops it', async () => {
      const q = await makeQueue(store(), { name: 'cached-q', accountId: '555555555555' });
      const address = { accountId: '555555555555', region: 'us-east-1', name: 'cached-q' };
      const cached = () => store().queues.cached?.(address);
      assert.equal((await store().queues.get(address))?.id, q.id);
      // A store with the method holds what it just read; one without has `get` read each time.
      if (store().queues.cached) assert.equal(cached()?.id, q.id, 'held after a read');
      await store().queues.update(q.id, { setAttributes: { DelaySeconds: '7' } });
      assert.equal(cached(), undefined, 'a change drops the record');
      assert.equal((await store().queues.get(address))?.attributes.DelaySeconds, '7');
      assert.ok(cached() === undefined || cached()!.attributes.DelaySeconds === '7');
      await store().queues.delete(q.id);
      assert.equal(cached(), undefined, 'a deleted queue is not held');
      assert.equal(store().queues.cached?.({ ...address, name: 'never-made' }), undefined);
    });

    test('queues are found by account, region and name, and by id', async () => {
      const q = await makeQueue(store(), { name: 'findme', accountId: '111111111111' });
      assert.equal(
        (await store().queues.get({ accountId: '111111111111', region: 'us-east-1', name: 'findme' }))?.id,
        q.id,
      );
      assert.equal(
        await store().queues.get({ accountId: '000000000000', region: 'us-east-1', name: 'findme' }),
        undefined,
      );
      assert.equal(
        await store().queues.get({ accountId: '111111111111', region: 'eu-west-1', name: 'findme' }),
        undefined,
        'not in another region',
      );
      assert.equal((await store().queues.byId(q.id))?.name, 'findme');
      assert.equal((await store().queues.byId(q.id))?.region, 'us-east-1');
    });

    test('the same name in two regions is two queues, each found and listed in its own region only', async () => {
      const east = await makeQueue(store(), {
        name: 'twin',
        accountId: '333333333333',
        region: 'us-east-1',
        attributes: { DelaySeconds: '1' },
      });
      const west = await makeQueue(store(), {
        name: 'twin',
        accountId: '333333333333',
        region: 'eu-west-1',
        attributes: { DelaySeconds: '2' },
      });
      assert.notEqual(east.id, west.id);
      assert.equal(west.region, 'eu-west-1');
      const again = await store().queues.create({ ...west, attributes: {} });
      assert.equal(again.created, false, 'a second create in the same region finds the first');
      assert.equal(again.queue.id, west.id);
      const get = (region: string) => store().queues.get({ accountId: '333333333333', region, name: 'twin' });
      assert.equal((await get('us-east-1'))?.attributes.DelaySeconds, '1');
      assert.equal((await get('eu-west-1'))?.attributes.DelaySeconds, '2');
      await store().queues.update(west.id, { setAttributes: { DelaySeconds: '3' } });
      assert.equal((await get('eu-west-1'))?.attributes.DelaySeconds, '3', 'the cache keeps the regions apart');
      assert.equal((await get('us-east-1'))?.attributes.DelaySeconds, '1');
      const list = (region: string) => store().queues.list({ accountId: '333333333333', region }, '', undefined, 10);
      assert.deepEqual(
        (await list('us-east-1')).map((q) => [q.name, q.region]),
        [['twin', 'us-east-1']],
      );
      assert.deepEqual(
        (await list('eu-west-1')).map((q) => [q.name, q.region]),
        [['twin', 'eu-west-1']],
      );
      assert.deepEqual(await list('ap-south-1'), []);
      await store().queues.delete(east.id);
      assert.equal(await get('us-east-1'), undefined);
      assert.equal((await get('eu-west-1'))?.id, west.id, "deleting one region's queue leaves the other");
    });

    test('listQueues filters by prefix, orders by name and pages after a name', async () => {
      for (const n of ['pfx-c', 'pfx-a', 'pfx-b', 'other'])
        await makeQueue(store(), { name: n, accountId: '222222222222' });
      const owner = { accountId: '222222222222', region: 'us-east-1' };
      const all = await store().queues.list(owner, 'pfx-', undefined, 10);
      assert.deepEqual(
        all.map((q) => q.name),
        ['pfx-a', 'pfx-b', 'pfx-c'],
      );
      const page = await store().queues.list(owner, 'pfx-', 'pfx-a', 1);
      assert.deepEqual(
        page.map((q) => q.name),
        ['pfx-b'],
      );
    });

    test('updateQueue merges and removes attributes and tags', async () => {
      const q = await makeQueue(store(), { tags: { a: '1', b: '2' } });
      const u = await store().queues.update(q.id, {
        setAttributes: { DelaySeconds: '5' },
        removeAttributes: ['VisibilityTimeout'],
        setTags: { c: '3' },
        removeTags: ['a'],
        modifiedAt: 42,
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

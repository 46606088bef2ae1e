import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { BindingRecord, ExchangeRecord } from '../../../src/engine/store/store.js';
import { makeQueue, useStore, type CaseGroup } from '../harness.js';

const exchange = (name: string, o: Partial<ExchangeRecord> = {}): ExchangeRecord => ({
  accountId: '000000000001',
  name,
  type: 'direct',
  durable: true,
  autoDelete: false,
  internal: false,
  arguments: {},
  ...o,
});

const binding = (source: string, destination: string, o: Partial<BindingRecord> = {}): BindingRecord => ({
  accountId: '000000000001',
  source,
  destinationKind: 'queue',
  destination,
  routingKey: 'k',
  arguments: {},
  ...o,
});

export const exchangeCases: CaseGroup = (open) => {
  describe('AMQP exchanges and bindings', () => {
    const store = useStore(open);

    test('declare inserts once and returns the stored exchange; get and delete', async () => {
      const first = await store().exchanges.declare(
        exchange('ex-a', { type: 'topic', arguments: { 'alternate-exchange': 'alt' } }),
      );
      assert.equal(first.created, true);
      assert.deepEqual(first.exchange, exchange('ex-a', { type: 'topic', arguments: { 'alternate-exchange': 'alt' } }));
      const again = await store().exchanges.declare(exchange('ex-a', { type: 'fanout' }));
      assert.equal(again.created, false);
      assert.equal(again.exchange.type, 'topic', 'the stored exchange wins');
      assert.equal(await store().exchanges.get('000000000002', 'ex-a'), undefined, 'exchanges are per account');
      assert.equal(await store().exchanges.delete('000000000001', 'ex-a'), true);
      assert.equal(await store().exchanges.delete('000000000001', 'ex-a'), false);
      assert.equal(await store().exchanges.get('000000000001', 'ex-a'), undefined);
    });

    test('bindings are sets keyed by source, destination, key and arguments, listed in order', async () => {
      const x = store().exchanges;
      assert.equal(await x.bind(binding('ex-b', 'q1')), true);
      assert.equal(await x.bind(binding('ex-b', 'q1')), false, 'an identical binding is not added twice');
      assert.equal(
        await x.bind(binding('ex-b', 'q1', { arguments: { b: 2, a: 1 } })),
        true,
        'other arguments: another binding',
      );
      assert.equal(
        await x.bind(binding('ex-b', 'q1', { arguments: { a: 1, b: 2 } })),
        false,
        'argument order does not matter',
      );
      assert.equal(await x.bind(binding('ex-b', 'ex-c', { destinationKind: 'exchange', routingKey: '' })), true);
      assert.deepEqual(
        (await x.bindings('000000000001', 'ex-b')).map((b) => [
          b.destinationKind,
          b.destination,
          b.routingKey,
          b.arguments,
        ]),
        [
          ['queue', 'q1', 'k', {}],
          ['queue', 'q1', 'k', { a: 1, b: 2 }],
          ['exchange', 'ex-c', '', {}],
        ],
      );
      await x.declare(exchange('ex-a'));
      assert.equal(await x.bind(binding('ex-a', 'q1', { routingKey: 'k1' })), true);
      assert.equal(await x.bind(binding('ex-a', 'q1', { routingKey: 'k2' })), true);
      assert.deepEqual(
        await x.sourcesOf('000000000001', 'queue', 'q1'),
        ['ex-a', 'ex-b'],
        'sourcesOf: each exchange bound to the queue once, in name order',
      );
      assert.deepEqual(await x.sourcesOf('000000000001', 'exchange', 'ex-c'), ['ex-b']);
      assert.deepEqual(await x.sourcesOf('000000000009', 'queue', 'q1'), [], "another account's bindings are not seen");
      await x.unbindDestination('000000000001', 'queue', 'q1');
      assert.deepEqual(await x.sourcesOf('000000000001', 'queue', 'q1'), []);
      await x.bind(binding('ex-b', 'q1'));
      await x.bind(binding('ex-b', 'q1', { arguments: { a: 1, b: 2 } }));
      assert.equal(await x.unbind(binding('ex-b', 'q1', { arguments: { a: 1, b: 2 } })), true);
      assert.equal(await x.unbind(binding('ex-b', 'q1', { arguments: { a: 1, b: 2 } })), false);
      assert.equal(await x.unbindDestination('000000000001', 'queue', 'q1'), 1);
      assert.deepEqual(
        (await x.bindings('000000000001', 'ex-b')).map((b) => b.destination),
        ['ex-c'],
      );
    });

    test("list and allBindings: one account's exchanges in name order and its bindings in order, each up to a limit", async () => {
      const x = store().exchanges;
      const account = '000000000009';
      for (const name of ['lx-b', 'lx-a', 'lx-c']) await x.declare(exchange(name, { accountId: account }));
      await x.declare(exchange('lx-other'));
      await x.bind(binding('lx-b', 'q1', { accountId: account }));
      await x.bind(binding('lx-a', 'q2', { accountId: account, routingKey: 'r' }));
      await x.bind(binding('lx-a', 'lx-c', { accountId: account, destinationKind: 'exchange' }));
      await x.bind(binding('lx-other', 'q9'));
      assert.deepEqual(
        (await x.list(account, 10)).map((e) => e.name),
        ['lx-a', 'lx-b', 'lx-c'],
      );
      assert.deepEqual(
        (await x.list(account, 2)).map((e) => e.name),
        ['lx-a', 'lx-b'],
      );
      assert.deepEqual(
        (await x.allBindings(account, 10)).map((b) => [b.source, b.destination]),
        [
          ['lx-b', 'q1'],
          ['lx-a', 'q2'],
          ['lx-a', 'lx-c'],
        ],
      );
      assert.equal((await x.allBindings(account, 1)).length, 1);
      assert.deepEqual(await x.list('000000000008', 10), []);
    });

    test('deleting an exchange removes the bindings from it and to it', async () => {
      const x = store().exchanges;
      await x.declare(exchange('ex-d'));
      await x.bind(binding('ex-d', 'q2'));
      await x.bind(binding('ex-e', 'ex-d', { destinationKind: 'exchange' }));
      await x.bind(binding('ex-e', 'q3'));
      await x.delete('000000000001', 'ex-d');
      assert.deepEqual(await x.bindings('000000000001', 'ex-d'), []);
      assert.deepEqual(
        (await x.bindings('000000000001', 'ex-e')).map((b) => b.destination),
        ['q3'],
      );
    });

    test("a queue's AMQP declaration is recorded and replaced", async () => {
      const q = await makeQueue(store());
      assert.equal(await store().exchanges.queue(q.id), undefined);
      await store().exchanges.setQueue({
        queueId: q.id,
        durable: true,
        exclusive: false,
        autoDelete: false,
        arguments: { 'x-max-length': 5 },
      });
      await store().exchanges.setQueue({
        queueId: q.id,
        durable: false,
        exclusive: true,
        autoDelete: true,
        arguments: { 'x-queue-type': 'classic' },
      });
      assert.deepEqual(await store().exchanges.queue(q.id), {
        queueId: q.id,
        durable: false,
        exclusive: true,
        autoDelete: true,
        arguments: { 'x-queue-type': 'classic' },
      });
    });
  });
};

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { filterPredicate, parseMoveFilter } from '../../src/engine/move-tasks/move-filter.js';
import type { StoredMessage } from '../../src/engine/kernel/types.js';

const message = (over: Partial<StoredMessage>): StoredMessage => ({
  messageId: 'm',
  body: '',
  md5OfBody: '',
  senderId: 's',
  sentAt: 0,
  visibleAt: 0,
  seq: 1,
  queueId: 1,
  receiveCount: 0,
  firstReceivedAt: null,
  receivedAt: null,
  receiptToken: null,
  ...over,
});
const matches = (filter: unknown, over: Partial<StoredMessage>) =>
  filterPredicate(parseMoveFilter(filter))(message(over));

describe('selective-redrive filters', () => {
  test('no filter matches everything', () => {
    assert.equal(filterPredicate(undefined)(message({})), true);
  });

  test('JSON paths in their three spellings, with and without Equals', () => {
    const body = JSON.stringify({ order: { items: [{ sku: 'A-1', qty: 2 }], tags: { 'x-y': true } } });
    for (const path of ['$.order.items[0].sku', 'order.items.0.sku', "$['order']['items'][0]['sku']"]) {
      assert.equal(matches({ BodyJsonPath: path, Equals: 'A-1' }, { body }), true, path);
      assert.equal(matches({ BodyJsonPath: path, Equals: 'B-2' }, { body }), false, path);
    }
    assert.equal(
      matches({ BodyJsonPath: '$.order.items[0]', Equals: { qty: 2, sku: 'A-1' } }, { body }),
      false,
      'key order matters',
    );
    assert.equal(matches({ BodyJsonPath: '$.order.items[0]', Equals: { sku: 'A-1', qty: 2 } }, { body }), true);
    assert.equal(matches({ BodyJsonPath: '$.order.tags.x-y' }, { body }), true);
    assert.equal(matches({ BodyJsonPath: '$.order.missing' }, { body }), false);
    assert.equal(matches({ BodyJsonPath: '$.a' }, { body: 'not json' }), false);
  });

  test('attributes, source and dead-lettering time', () => {
    const m = {
      attributes: { t: { DataType: 'String', StringValue: 'acme' }, b: { DataType: 'Binary', BinaryValue: 'AAE=' } },
      deadLetterSourceArn: 'arn:src',
      deadLetteredAt: 1_000,
    };
    assert.equal(matches({ MessageAttribute: { Name: 't', Value: 'acme' } }, m), true);
    assert.equal(matches({ MessageAttribute: { Name: 'b', Value: 'AAE=' } }, m), true);
    assert.equal(matches({ MessageAttribute: { Name: 't', Value: 'other' } }, m), false);
    assert.equal(
      matches({ DeadLetterQueueSourceArn: 'arn:src', DeadLetteredAfter: 1_000, DeadLetteredBefore: 1_001 }, m),
      true,
    );
    assert.equal(matches({ DeadLetteredBefore: 1_000 }, m), false);
    assert.equal(matches({ DeadLetteredAfter: 0 }, {}), false, 'never dead-lettered');
  });

  test('bad filters are refused with InvalidParameterValue', () => {
    for (const bad of [
      [],
      'x',
      { Unknown: 1 },
      { BodyContains: 3 },
      { Equals: 1 },
      { BodyJsonPath: '$..a' },
      { MessageAttribute: { Name: 'x' } },
      { DeadLetteredAfter: 'yesterday' },
    ]) {
      assert.throws(() => parseMoveFilter(bad), { name: 'InvalidParameterValueException' }, JSON.stringify(bad));
    }
  });
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Resources } from '../../src/server/resources.js';

test('closeAll releases in reverse order of acquisition, awaiting each before the next', async () => {
  const resources = new Resources();
  const log: string[] = [];
  resources.defer(() => log.push('store'));
  resources.defer(async () => {
    await new Promise((r) => setTimeout(r, 10));
    log.push('engine');
  });
  resources.defer(() => log.push('http'));
  await resources.closeAll();
  assert.deepEqual(log, ['http', 'engine', 'store']);
});

test('a failing release does not stop the others; its error is thrown as it is', async () => {
  const resources = new Resources();
  const log: string[] = [];
  const broken = new Error('engine would not close');
  resources.defer(() => log.push('store'));
  resources.defer(() => {
    throw broken;
  });
  resources.defer(() => log.push('http'));
  await assert.rejects(resources.closeAll(), (e) => e === broken);
  assert.deepEqual(log, ['http', 'store']);
});

test('several failures are thrown together, last acquired first', async () => {
  const resources = new Resources();
  const first = new Error('store');
  const second = new Error('http');
  resources.defer(() => Promise.reject(first));
  resources.defer(() => Promise.reject(second));
  await assert.rejects(resources.closeAll(), (e) => {
    assert.ok(e instanceof AggregateError);
    assert.deepEqual(e.errors, [second, first]);
    assert.equal(e.message, '2 resources failed to close');
    return true;
  });
});

test('what was released is not released again', async () => {
  const resources = new Resources();
  let closed = 0;
  resources.defer(() => closed++);
  await resources.closeAll();
  await resources.closeAll();
  assert.equal(closed, 1);
});

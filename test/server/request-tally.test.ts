/** SQS requests per access key (src/server/management/request-tally.ts) on an injected clock: the minute window, accounts apart, the cap. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_TRACKED_KEYS, RequestTally } from '../../src/server/management/request-tally.js';

test('requests in the last minute slide with the clock; totals and the last address stay', () => {
  let now = 1_000_000;
  const tally = new RequestTally(() => now);
  for (let i = 0; i < 30; i++) tally.count('111', 'AKIDA', '10.0.0.1');
  now += 30_000;
  for (let i = 0; i < 15; i++) tally.count('111', 'AKIDA', '10.0.0.2');
  assert.deepEqual(tally.clients('111'), [
    {
      access_key: 'AKIDA',
      peer_host: '10.0.0.2',
      first_seen: 1_000_000,
      last_seen: 1_030_000,
      requests: 45,
      requests_last_minute: 45,
      rate: 0.75,
    },
  ]);
  now += 45_000; // the first 30 are now more than a minute old
  assert.equal(tally.clients('111')[0]!.requests_last_minute, 15);
  now += 60_000;
  assert.deepEqual([tally.clients('111')[0]!.requests_last_minute, tally.clients('111')[0]!.requests], [0, 45]);
  now += 3_600_000; // an hour idle: the window is cleared, not replayed
  tally.count('111', 'AKIDA', '10.0.0.2');
  assert.equal(tally.clients('111')[0]!.requests_last_minute, 1);
});

test("a run of requests counted at once (an HTTP thread's) counts as that many, in the window and in all", () => {
  let now = 2_000_000;
  const tally = new RequestTally(() => now);
  tally.count('111', 'AKIDA', '10.0.0.1', 7);
  tally.count('111', 'AKIDA', '10.0.0.1');
  assert.deepEqual([tally.clients('111')[0]!.requests_last_minute, tally.clients('111')[0]!.requests], [8, 8]);
  now += 61_000;
  assert.deepEqual([tally.clients('111')[0]!.requests_last_minute, tally.clients('111')[0]!.requests], [0, 8]);
});

test('each account sees its own keys only, most recent first; unsigned requests are one entry', () => {
  const tally = new RequestTally(() => 5_000);
  tally.count('111', 'AKIDA', 'a');
  tally.count('222', 'AKIDB', 'b');
  tally.count('111', undefined, 'c');
  tally.count('111', 'AKIDC', 'd');
  assert.deepEqual(
    tally.clients('111').map((c) => c.access_key),
    ['AKIDC', '(unsigned)', 'AKIDA'],
  );
  assert.deepEqual(
    tally.clients('222').map((c) => c.access_key),
    ['AKIDB'],
  );
  assert.deepEqual(tally.clients('333'), []);
});

test(`at most ${MAX_TRACKED_KEYS} keys: a new one replaces the one seen longest ago`, () => {
  const tally = new RequestTally(() => 0);
  for (let i = 0; i < MAX_TRACKED_KEYS; i++) tally.count('111', `K${i}`, 'x');
  tally.count('111', 'K0', 'x'); // K0 is used again: K1 is now the oldest
  tally.count('111', 'new', 'x');
  let keys = tally.clients('111').map((c) => c.access_key);
  assert.equal(keys.length, MAX_TRACKED_KEYS);
  assert.ok(keys.includes('K0') && !keys.includes('K1') && keys.includes('K2'));
  for (let i = 0; i < 10_000; i++) tally.count('111', `made-up-${i}`, 'x');
  assert.equal(tally.size, MAX_TRACKED_KEYS);
  tally.count('111', 'K0', 'x');
  keys = tally.clients('111').map((c) => c.access_key);
  assert.equal(keys[0], 'K0');
  assert.equal(tally.clients('111')[0]!.requests, 1, 'an evicted key starts again from zero');
});

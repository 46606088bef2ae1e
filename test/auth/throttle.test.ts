/** The throttle of failed authentication (src/auth/throttle.ts) on an injected clock. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addressKey, AuthThrottle, delayAfter, FailureTable, type BackoffRules } from '../../src/auth/throttle.js';

const RULES: BackoffRules = { free: 3, baseMs: 1_000, maxMs: 8_000, forgetMs: 60_000, maxEntries: 5 };

function throttle() {
  let now = 1_000_000;
  const t = new AuthThrottle({ address: RULES, key: RULES }, () => now);
  return { t, advance: (ms: number) => (now += ms) };
}

test('failures past the free allowance wait 1 s, doubling up to the cap', () => {
  assert.deepEqual(
    [1, 2, 3, 4, 5, 6, 7, 8].map((f) => delayAfter(f, RULES)),
    [0, 0, 0, 1_000, 2_000, 4_000, 8_000, 8_000],
  );
  assert.equal(delayAfter(10_000, RULES), 8_000, 'no overflow for a long run of failures');
});

test('an address is answered "wait" once past its allowance, and checked again when the wait is over', () => {
  const { t, advance } = throttle();
  for (let i = 0; i < 4; i++) {
    assert.equal(t.wait('198.51.100.1', `key-${i}`), 0, `attempt ${i + 1} is checked`);
    t.failed('198.51.100.1', `key-${i}`);
  }
  assert.equal(t.wait('198.51.100.1', 'other'), 1_000);
  assert.equal(t.wait('198.51.100.2', 'other'), 0, 'another address is not affected');
  advance(999);
  assert.equal(t.wait('198.51.100.1', 'other'), 1);
  advance(1);
  assert.equal(t.wait('198.51.100.1', 'other'), 0);
});

test('parallel attempts gain nothing: each failure is counted before the next check', () => {
  const { t } = throttle();
  let checked = 0;
  for (let i = 0; i < 100; i++) {
    if (t.wait('203.0.113.9', 'AKID') > 0) continue;
    checked++;
    t.failed('203.0.113.9', 'AKID');
  }
  assert.equal(checked, 4);
});

test('a key guessed from many addresses holds back only addresses that failed, never a clean client', () => {
  const { t } = throttle();
  for (let i = 0; i < 5; i++) t.failed(`192.0.2.${i}`, 'AKIDVICTIM');
  // Each attacker address failed once (within its own allowance), but the key is past its own.
  assert.equal(t.wait('192.0.2.0', 'AKIDVICTIM'), 2_000);
  assert.equal(t.wait('192.0.2.0', 'AKIDOTHER'), 0, 'other keys are checked');
  assert.equal(
    t.wait('198.51.100.77', 'AKIDVICTIM'),
    0,
    'the key’s owner, from an address without failures, is checked',
  );
  t.succeeded('198.51.100.77', 'AKIDVICTIM');
  assert.equal(t.wait('192.0.2.0', 'AKIDVICTIM'), 0, 'a success clears the key');
});

test('a success does not clear the address: one good key cannot reset guesses at others', () => {
  const { t } = throttle();
  for (let i = 0; i < 4; i++) t.failed('203.0.113.1', 'AKIDOTHER');
  t.succeeded('203.0.113.1', 'AKIDMINE');
  assert.equal(t.wait('203.0.113.1', 'AKIDOTHER'), 1_000);
});

test('failures are forgotten after forgetMs, and the table stays bounded', () => {
  const { t, advance } = throttle();
  for (let i = 0; i < 4; i++) t.failed('203.0.113.1', undefined);
  advance(60_001);
  assert.equal(t.wait('203.0.113.1', undefined), 0);
  t.failed('203.0.113.1', undefined);
  assert.equal(t.wait('203.0.113.1', undefined), 0, 'the run starts afresh');

  let now = 0;
  const table = new FailureTable(RULES);
  for (let i = 0; i < 1_000; i++) table.failed(`10.0.${i >> 8}.${i & 255}`, now++);
  assert.equal(table.size, RULES.maxEntries);
  now += 61_000;
  table.failed('10.9.9.9', now);
  assert.equal(table.size, 1, 'old entries go from the front when the next failure comes');
});

test('long keys are held by their hash, so a guess of megabytes costs a few bytes', () => {
  const { t } = throttle();
  const huge = 'x'.repeat(1_000_000);
  for (let i = 0; i < 4; i++) t.failed(`192.0.2.${i}`, huge);
  assert.equal(t.wait('192.0.2.0', huge), 1_000);
});

test('IPv6 clients are throttled by their /64; IPv4-mapped addresses as IPv4', () => {
  assert.equal(addressKey('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
  assert.equal(addressKey('2001:0db8:0001:0002:ffff:ffff:ffff:ffff'), '2001:db8:1:2::/64');
  assert.equal(addressKey('2001:db8::5'), '2001:db8:0:0::/64');
  assert.equal(addressKey('::1'), '0:0:0:0::/64');
  assert.equal(addressKey('::ffff:192.0.2.1'), '192.0.2.1');
  assert.equal(addressKey('192.0.2.1'), '192.0.2.1');
  const { t } = throttle();
  for (let i = 0; i < 4; i++) t.failed(`2001:db8:1:2::${i + 1}`, undefined);
  assert.equal(t.wait('2001:db8:1:2:ffff::9', undefined), 1_000);
  assert.equal(t.wait('2001:db8:1:3::1', undefined), 0);
});

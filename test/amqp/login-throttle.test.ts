/** The failed sign-in throttle of the AMQP listener, on an injected clock. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LoginThrottle } from '../../src/protocols/amqp/login-throttle.js';

const rules = { user: { burst: 3, perSecond: 0.5 }, address: { burst: 5, perSecond: 1 } };

test('a user is throttled after its burst of failures and forgiven at the refill rate', () => {
  let now = 0;
  const t = new LoginThrottle(() => now, rules);
  for (let i = 0; i < 3; i++) {
    assert.ok(t.allowed('alice', '10.0.0.1'));
    t.failed('alice', '10.0.0.1');
  }
  assert.equal(t.allowed('alice', '10.0.0.2'), false, 'from any address');
  assert.ok(t.allowed('bob', '10.0.0.2'), 'another user from another address is not');
  now += 1999;
  assert.equal(t.allowed('alice', '10.0.0.2'), false);
  now += 1;
  assert.ok(t.allowed('alice', '10.0.0.2'), 'one attempt every 2 s');
});

test('an address is throttled after its burst of failures, whatever the user names', () => {
  let now = 0;
  const t = new LoginThrottle(() => now, rules);
  for (let i = 0; i < 5; i++) t.failed(`user${i}`, '10.0.0.9');
  assert.equal(t.allowed('someone-else', '10.0.0.9'), false);
  assert.ok(t.allowed('someone-else', '10.0.0.10'));
  now += 1000;
  assert.ok(t.allowed('someone-else', '10.0.0.9'));
});

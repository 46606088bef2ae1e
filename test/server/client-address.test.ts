/** Which address a request comes from, with and without --trust-proxy (src/server/client-address.ts). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ClientAddress, parseTrustProxy } from '../../src/server/client-address.js';

test('without --trust-proxy, X-Forwarded-For is ignored', () => {
  const c = new ClientAddress();
  assert.equal(c.of('198.51.100.1', '203.0.113.9'), '198.51.100.1');
  assert.equal(c.of(undefined, undefined), '');
});

test('behind trusted proxies, the client is the right-most untrusted hop', () => {
  const c = new ClientAddress(['127.0.0.1', '10.0.0.0/8']);
  assert.equal(c.of('127.0.0.1', '203.0.113.9'), '203.0.113.9');
  // A client that writes its own X-Forwarded-For only adds hops to the left: the proxy's append wins.
  assert.equal(c.of('127.0.0.1', '1.1.1.1, 203.0.113.9'), '203.0.113.9');
  assert.equal(c.of('127.0.0.1', ['1.1.1.1', '203.0.113.9, 10.1.2.3']), '203.0.113.9', 'trusted hops are skipped');
  assert.equal(c.of('::ffff:127.0.0.1', '203.0.113.9'), '203.0.113.9', 'an IPv4-mapped peer');
  assert.equal(c.of('127.0.0.1', '[2001:db8::1]:4711'), '2001:db8::1');
  assert.equal(c.of('127.0.0.1', '203.0.113.9:4711'), '203.0.113.9');
  assert.equal(c.of('127.0.0.1', '10.0.0.1'), '10.0.0.1', 'every hop trusted: the left-most');
  assert.equal(c.of('127.0.0.1', undefined), '127.0.0.1', 'no header: the proxy itself');
});

test('a peer that is not a trusted proxy is the client, whatever it writes', () => {
  const c = new ClientAddress(['127.0.0.1']);
  assert.equal(c.of('198.51.100.1', '203.0.113.9'), '198.51.100.1');
});

test('a hop that is not an address stops the walk at the last good one', () => {
  const c = new ClientAddress(['127.0.0.1', '10.0.0.0/8']);
  assert.equal(c.of('127.0.0.1', 'unknown, 10.0.0.5'), '10.0.0.5');
  assert.equal(c.of('127.0.0.1', 'garbage'), '127.0.0.1');
});

test('--trust-proxy takes addresses and CIDR ranges, and names what it cannot read', () => {
  assert.deepEqual(parseTrustProxy('127.0.0.1, 10.0.0.0/8,::1,fd00::/8'), [
    '127.0.0.1',
    '10.0.0.0/8',
    '::1',
    'fd00::/8',
  ]);
  for (const bad of ['', 'localhost', '10.0.0.0/33', '1.2.3.4/8/1', '::1/129'])
    assert.throws(() => parseTrustProxy(bad), bad);
});

/** The console's session table (src/auth/console-sessions.ts): bounded, swept in O(1), none for an open console. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SESSION_MS, Sessions } from '../../src/auth/console-sessions.js';

test('an open console keeps no session: the CSRF token is derived from the cookie', () => {
  const s = new Sessions();
  const fresh = s.open('000000000000')!;
  assert.equal(s.size, 0);
  assert.match(fresh.id, /^[\w-]{43}$/);
  const again = s.open('000000000000', fresh.id)!;
  assert.equal(again.csrfToken, fresh.csrfToken, 'the same cookie gives the same token');
  assert.notEqual(s.open('000000000000')!.csrfToken, fresh.csrfToken);
  assert.equal(
    new Sessions().open('000000000000', fresh.id)!.csrfToken === fresh.csrfToken,
    false,
    'another process has another key',
  );
  assert.equal(s.open('000000000000', 'not-a-session-id'), undefined);
  assert.equal(s.size, 0);
});

test('signed-in sessions are capped, the oldest going first', () => {
  const s = new Sessions(3, 3);
  const made = [1, 2, 3, 4].map((i) => s.create('111111111111', 'AKID', i));
  assert.equal(s.size, 3);
  assert.equal(s.get(made[0]!.id, 10), undefined);
  assert.ok(s.get(made[3]!.id, 10));
});

test('expired sessions are dropped from the front when a session is made', () => {
  const s = new Sessions(10_000, 10_000);
  for (let i = 0; i < 1_000; i++) s.create('111111111111', 'AKID', i);
  const later = s.create('111111111111', 'AKID', 500 + SESSION_MS)!;
  assert.equal(s.size, 500, 'the 500 created before the cutoff went, the rest stay');
  assert.ok(s.get(later.id, 500 + SESSION_MS));
});

test("an account past its share signs out its own oldest session, never another account's", () => {
  const s = new Sessions(10, 3);
  const victim = s.create('222222222222', 'AKIDB', 0)!;
  const attacker = Array.from({ length: 50 }, (_, i) => s.create('111111111111', 'AKIDA', i + 1)!);
  assert.equal(s.size, 4, 'the attacker holds its 3, the victim its 1');
  assert.ok(s.get(victim.id, 100), 'the victim is still signed in');
  assert.deepEqual(
    attacker.map((a) => s.get(a.id, 100) !== undefined),
    [...Array<boolean>(47).fill(false), true, true, true],
  );
});

test('with the table full, an account that holds none is refused; one that holds some replaces its own', () => {
  const s = new Sessions(4, 2);
  const held = ['1', '2'].flatMap((a) => [
    s.create(`${a}`.padStart(12, '0'), 'K', 0)!,
    s.create(`${a}`.padStart(12, '0'), 'K', 1)!,
  ]);
  assert.equal(s.size, 4);
  assert.equal(s.create('000000000003', 'K', 2), undefined, 'no room, and no session of its own to replace');
  const again = s.create('000000000001', 'K', 3)!;
  assert.ok(s.get(again.id, 4));
  assert.equal(s.get(held[0]!.id, 4), undefined, 'its own oldest went');
  assert.ok(s.get(held[2]!.id, 4) && s.get(held[3]!.id, 4), "the other account's stay");
  // Signing out gives the room back.
  s.delete(again.id);
  assert.ok(s.create('000000000003', 'K', 5));
});

/** The console's session table (src/console/sessions.ts): bounded, swept in O(1), none for an open console. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SESSION_MS, Sessions } from '../../src/console/sessions.js';

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
  const s = new Sessions(3);
  const made = [1, 2, 3, 4].map((i) => s.create('111111111111', 'AKID', i));
  assert.equal(s.size, 3);
  assert.equal(s.get(made[0]!.id, 10), undefined);
  assert.ok(s.get(made[3]!.id, 10));
});

test('expired sessions are dropped from the front when a session is made', () => {
  const s = new Sessions();
  for (let i = 0; i < 1_000; i++) s.create('111111111111', 'AKID', i);
  const later = s.create('111111111111', 'AKID', 500 + SESSION_MS);
  assert.equal(s.size, 500, 'the 500 created before the cutoff went, the rest stay');
  assert.ok(s.get(later.id, 500 + SESSION_MS));
});

/**
 * Basic-auth guessing against the management API: 300 guesses fired as fast as a client
 * can get at most the allowance checked, then 429 with Retry-After in RabbitMQ's JSON
 * shape, answered at once; guessing one user from many addresses is held back by the
 * user's own count; the operator, from another address, is served throughout. Bounded:
 * 450 requests, a few seconds.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

const USER = 'AKIDOPS';
const SECRET = 'ops-secret';
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
/** A good call slower than this fails the test: far above its normal few ms, for a loaded machine. */
const SLOW_MS = 10_000;

const dir = mkdtempSync(join(tmpdir(), 'redrive-mgmt-storm-'));
let server: ServerProcess;

before(async () => {
  writeFileSync(
    join(dir, 'keys.json'),
    JSON.stringify({ [USER]: { secretAccessKey: SECRET, accountId: '111111111111' } }),
  );
  // The throttle runs on the server's clock: a manual one, never moved, keeps the waits
  // from running out on a slow machine, so the counts below are exact.
  server = await startServerProcess({
    storage: 'memory',
    manualClock: true,
    args: ['--credentials', join(dir, 'keys.json'), '--trust-proxy', '127.0.0.1'],
  });
});

after(async () => {
  await server?.stop();
  server?.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

function api(path: string, authorization: string, from?: string, init: RequestInit = {}) {
  return fetch(`${server.url}/api/${path}`, {
    ...init,
    headers: { authorization, 'content-type': 'application/json', ...(from ? { 'x-forwarded-for': from } : {}) },
  });
}

async function timedOk(what: string, call: () => Promise<Response>, status: number): Promise<void> {
  const started = performance.now();
  const res = await call();
  await res.arrayBuffer();
  const ms = performance.now() - started;
  assert.equal(res.status, status, what);
  assert.ok(ms < SLOW_MS, `${what} took ${Math.round(ms)} ms`);
}

test('a flood of guesses from one address is checked only up to the allowance; the operator is served', async () => {
  const attacker = '203.0.113.77';
  const flood = Promise.all(
    Array.from({ length: 300 }, (_, i) => api('policies', basic(i % 2 ? USER : `user-${i}`, `guess-${i}`), attacker)),
  );
  const operator = (async () => {
    await timedOk(
      'operator PUT',
      () =>
        api('policies/%2F/ops', basic(USER, SECRET), '198.51.100.8', {
          method: 'PUT',
          body: JSON.stringify({ pattern: '^ops-', definition: { 'max-length': 5 } }),
        }),
      201,
    );
    await timedOk('operator GET, from the proxy’s own address', () => api('policies', basic(USER, SECRET)), 200);
  })();
  const [answers] = await Promise.all([flood, operator]);
  const checked = answers.filter((r) => r.status === 401).length;
  const throttled = answers.filter((r) => r.status === 429);
  assert.equal(checked, 11, 'ten failures in a row are checked freely, the eleventh sets the first wait');
  assert.equal(checked + throttled.length, 300, 'every guess is refused, 401 or 429');
  const one = throttled[0]!;
  assert.equal(one.headers.get('content-type'), 'application/json');
  assert.ok(Number(one.headers.get('retry-after')) >= 1);
  const body = (await one.json()) as { error: string; reason: string };
  assert.equal(body.error, 'too_many_requests');
  assert.match(body.reason, /^Too many failed logins; retry after \d+ seconds$/);

  assert.equal(
    (await api('policies', basic(USER, SECRET), attacker)).status,
    429,
    'the right password is not checked from the attacker’s address',
  );
  assert.equal(server.proc.exitCode, null);
  assert.equal((await fetch(`${server.url}/health`)).status, 200);
});

test('guessing one user from many addresses is held back by the user’s count, not the operator', async () => {
  const statuses: number[] = [];
  for (let round = 0; round < 3; round++) {
    const wave = await Promise.all(
      Array.from({ length: 50 }, (_, a) => api('policies', basic(USER, `wave-${round}-${a}`), `192.0.2.${a + 1}`)),
    );
    statuses.push(...wave.map((r) => r.status));
  }
  const checked = statuses.filter((s) => s === 401).length;
  // Each address's first guess is checked (it has no failure of its own); after that the
  // user, far past its allowance, holds back every address that has failed.
  assert.equal(checked, 50, 'the first guess of each address');
  assert.equal(statuses.filter((s) => s === 429).length, 150 - checked);
  await timedOk(
    'operator GET from a clean address',
    () => api('policies/%2F/ops', basic(USER, SECRET), '198.51.100.9'),
    200,
  );
});

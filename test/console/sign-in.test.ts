/**
 * The console with --credentials: nothing without a session, one answer for every wrong
 * key or secret, slower answers to repeated guesses, no cross-site POSTs, and each
 * session sees only its own account's queues.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { browserMissing, launchBrowser, logMatch, openPage } from './browser.js';

const dir = mkdtempSync(join(tmpdir(), 'redrive-console-keys-'));
const KEYS = {
  AKIDALPHA: { secretAccessKey: 'alpha-secret-1', accountId: '111111111111' },
  AKIDBETA: { secretAccessKey: 'beta-secret-2', accountId: '222222222222' },
};
let server: ServerProcess;

before(async () => {
  writeFileSync(join(dir, 'keys.json'), JSON.stringify(KEYS));
  // Behind a "proxy" on loopback, so that the throttle test guesses from an address of its own.
  // The throttle runs on the server's clock: a manual one, never moved, keeps the guesser's
  // wait from running out on a slow machine.
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

const origin = () => new URL(server.url).origin;

async function signIn(key: string, secret: string, headers: Record<string, string> = { origin: origin() }) {
  const res = await fetch(`${server.url}/console/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams({ accessKeyId: key, secretAccessKey: secret, next: '/console/queues' }).toString(),
  });
  return res;
}

interface Session {
  cookie: string;
  csrf: string;
}

async function session(key: keyof typeof KEYS): Promise<Session> {
  const res = await signIn(key, KEYS[key].secretAccessKey);
  assert.equal(res.status, 303);
  const setCookie = res.headers.get('set-cookie') ?? '';
  assert.match(setCookie, /HttpOnly/);
  assert.match(setCookie, /SameSite=Strict/);
  assert.match(setCookie, /Max-Age=28800/);
  const cookie = setCookie.split(';')[0]!;
  const page = await (await fetch(`${server.url}/console/queues`, { headers: { cookie } })).text();
  const csrf = /<meta name="redrive-csrf" content="([^"]+)">/.exec(page)?.[1];
  assert.ok(csrf, 'the page carries the CSRF token');
  return { cookie, csrf };
}

function consoleApi(s: Partial<Session>, action: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${server.url}/console/api`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-amz-json-1.0',
      'x-amz-target': `AmazonSQS.${action}`,
      ...(s.cookie ? { cookie: s.cookie } : {}),
      ...(s.csrf ? { 'x-redrive-csrf': s.csrf } : {}),
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

test('the start-up log says the console needs a sign-in', async () => {
  assert.match(
    await logMatch(server.output, /console at/),
    /console at http:\/\/127\.0\.0\.1:\d+\/console \(sign in with an access key\)/,
  );
  assert.doesNotMatch(server.output(), /console open without sign-in/);
});

test('without a session: pages redirect to sign-in, the API is refused', async () => {
  const page = await fetch(`${server.url}/console/queues/orders`, { redirect: 'manual' });
  assert.equal(page.status, 303);
  assert.equal(page.headers.get('location'), '/console/sign-in?next=%2Fconsole%2Fqueues%2Forders');
  const api = await consoleApi({}, 'ListQueues', {});
  assert.equal(api.status, 401);
  const forged = await consoleApi({ cookie: 'redrive_console=made-up' }, 'ListQueues', {});
  assert.equal(forged.status, 401);
});

test('a wrong secret and an unknown key get the same answer; past the allowance, sign-ins are refused at once', async () => {
  const guesser = { origin: origin(), 'x-forwarded-for': '203.0.113.50' };
  const wrongSecret = await signIn('AKIDALPHA', 'not-the-secret', guesser);
  const wrongKey = await signIn('AKIDNOBODY', KEYS.AKIDALPHA.secretAccessKey, guesser);
  const texts = [];
  for (const res of [wrongSecret, wrongKey]) {
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('set-cookie'), null);
    texts.push(/<p class="error" role="alert">([^<]*)<\/p>/.exec(await res.text())?.[1]);
  }
  assert.deepEqual(texts, ['invalid access key or secret', 'invalid access key or secret']);
  // Ten failures in a row are checked (docs/security.md); the next ones wait, and are
  // told so at once instead of being held.
  for (let i = 2; i < 11; i++) assert.equal((await signIn('AKIDALPHA', `guess-${i}`, guesser)).status, 401);
  const right = await signIn('AKIDALPHA', KEYS.AKIDALPHA.secretAccessKey, guesser);
  assert.equal(right.status, 429, 'not even the right secret is checked while the address waits');
  assert.equal(right.headers.get('set-cookie'), null);
  assert.ok(Number(right.headers.get('retry-after')) >= 1);
  assert.match(
    /<p class="error" role="alert">([^<]*)<\/p>/.exec(await right.text())?.[1] ?? '',
    /^too many failed sign-ins: try again in \d+ s$/,
  );
  // Someone else, from another address, signs in with the same key.
  assert.equal(
    (await signIn('AKIDALPHA', KEYS.AKIDALPHA.secretAccessKey, { origin: origin(), 'x-forwarded-for': '198.51.100.3' }))
      .status,
    303,
  );
});

test('a sign-in posted from another site is refused', async () => {
  const res = await signIn('AKIDALPHA', KEYS.AKIDALPHA.secretAccessKey, {
    origin: 'http://evil.example',
    'sec-fetch-site': 'cross-site',
  });
  assert.equal(res.status, 403);
  assert.equal(res.headers.get('set-cookie'), null);
});

test('a cross-site POST with the session cookie but without the CSRF token is refused', async () => {
  const s = await session('AKIDALPHA');
  const create = { QueueName: 'forged' };
  const noToken = await consoleApi({ cookie: s.cookie }, 'CreateQueue', create, {
    origin: 'http://evil.example',
    'sec-fetch-site': 'cross-site',
  });
  assert.equal(noToken.status, 403);
  const badToken = await consoleApi({ cookie: s.cookie, csrf: `${s.csrf}x` }, 'CreateQueue', create);
  assert.equal(badToken.status, 403);
  const otherOrigin = await consoleApi(s, 'CreateQueue', create, { origin: 'http://evil.example' });
  assert.equal(otherOrigin.status, 403);
  const crossSite = await consoleApi(s, 'CreateQueue', create, { 'sec-fetch-site': 'cross-site' });
  assert.equal(crossSite.status, 403);
  const list = (await (
    await consoleApi(s, 'ListQueues', {}, { origin: origin(), 'sec-fetch-site': 'same-origin' })
  ).json()) as { QueueUrls?: string[] };
  assert.ok(!(list.QueueUrls ?? []).some((u) => u.endsWith('/forged')), 'no forged request created a queue');
});

test('each session acts as its own account and sees only its queues; sign-out ends it', async () => {
  const alpha = await session('AKIDALPHA');
  const beta = await session('AKIDBETA');
  const made = (await (await consoleApi(alpha, 'CreateQueue', { QueueName: 'alpha-only' })).json()) as {
    QueueUrl: string;
  };
  assert.match(made.QueueUrl, /\/111111111111\/alpha-only$/);
  const betaList = (await (await consoleApi(beta, 'ListQueues', {})).json()) as { QueueUrls?: string[] };
  assert.deepEqual(betaList.QueueUrls ?? [], []);
  const peek = await consoleApi(beta, 'PeekMessages', { QueueUrl: made.QueueUrl });
  assert.notEqual(peek.status, 200, 'beta cannot browse alpha’s queue');

  const out = await fetch(`${server.url}/console/sign-out`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: alpha.cookie, origin: origin(), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrf: alpha.csrf }).toString(),
  });
  assert.equal(out.status, 303);
  assert.equal((await consoleApi(alpha, 'ListQueues', {})).status, 401);
});

const skip = browserMissing();

test('signing in in a browser shows that account’s queues and no other', { skip }, async () => {
  const alpha = await session('AKIDALPHA');
  await consoleApi(alpha, 'CreateQueue', { QueueName: 'alpha-browser' });
  const browser = await launchBrowser();
  try {
    const page = await browser.newPage();
    await page.goto(`${server.url}/console/queues`);
    await page.waitForURL('**/console/sign-in?next=%2Fconsole%2Fqueues');
    await page.fill('input[name=accessKeyId]', 'AKIDBETA');
    await page.fill('input[name=secretAccessKey]', 'wrong');
    await page.click('button[type=submit]');
    assert.equal(await page.textContent('p.error'), 'invalid access key or secret');
    assert.equal(await page.inputValue('input[name=accessKeyId]'), 'AKIDBETA', 'the access key id is kept');
    assert.equal(await page.inputValue('input[name=secretAccessKey]'), '', 'the secret is not');
    assert.equal(
      await page.evaluate(() => document.activeElement?.getAttribute('name')),
      'secretAccessKey',
      'the secret is the field to type',
    );
    await page.fill('input[name=secretAccessKey]', KEYS.AKIDBETA.secretAccessKey);
    await page.click('button[type=submit]');
    await page.waitForURL('**/console/queues');
    await page.waitForSelector('body[data-ready="true"]');
    await page.waitForSelector('p.empty');
    assert.match((await page.textContent('header.top')) ?? '', /222222222222 · AKIDBETA/);
    assert.equal(await page.locator('text=alpha-browser').count(), 0);
    // Beta's own queue, made in the console, appears.
    await openPage(page, `${server.url}/console/create-queue`);
    await page.fill('input[name=QueueName]', 'beta-queue');
    await page.click('button:has-text("Create queue")');
    await page.waitForURL('**/console/queues/beta-queue');
    await openPage(page, `${server.url}/console/queues`);
    await page.waitForSelector('#queues-table');
    assert.deepEqual(
      await page.locator('#queues-table tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-queue'))),
      ['beta-queue'],
    );
    const cookies = await page.context().cookies();
    const c = cookies.find((x) => x.name === 'redrive_console');
    assert.equal(c?.httpOnly, true);
    assert.equal(c?.sameSite, 'Strict');
  } finally {
    await browser.close();
  }
});

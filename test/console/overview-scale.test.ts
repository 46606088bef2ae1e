/**
 * The overview of an account with 100,000 queues (docs/console.md): the server filters,
 * sorts and pages, so the page fetches one page of rows and one request per refresh, and
 * a hidden tab asks nothing. The queues are created through the store before the server
 * starts on the same data directory; the page's timers run on Playwright's clock.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { defaultAttributes } from '../../src/engine/queues/queue-attributes.js';
import { SqliteStore } from '../../src/stores/sqlite/store.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { browserMissing, launchBrowser, openPage } from './browser.js';
import { newQueue } from '../../src/engine/store/queues.js';

const skip = browserMissing();
const QUEUES = Number(process.env.REDRIVE_TEST_OVERVIEW_QUEUES ?? 100_000);
const ACCOUNT = '000000000000';
const ALL = QUEUES.toLocaleString('en-US');
const LAST = (QUEUES - 99).toLocaleString('en-US');

async function fillStore(dataDir: string): Promise<void> {
  const store = new SqliteStore({ path: join(dataDir, 'redrive.db') });
  const now = Date.now();
  const create = (name: string, attributes: Record<string, string> = {}) =>
    store.queues.create(
      newQueue(
        {
          accountId: ACCOUNT,
          region: 'us-east-1',
          name,
          fifo: false,
          attributes: { ...defaultAttributes(false), ...attributes },
        },
        now,
      ),
    );
  for (let i = 0; i < QUEUES - 2; i += 1_000) {
    await Promise.all(
      Array.from({ length: Math.min(1_000, QUEUES - 2 - i) }, (_, j) => create(`q-${String(i + j).padStart(6, '0')}`)),
    );
  }
  const dlq = (await create('zz-dead')).queue;
  await create('zz-source', {
    RedrivePolicy: JSON.stringify({
      deadLetterTargetArn: `arn:aws:sqs:us-east-1:${ACCOUNT}:zz-dead`,
      maxReceiveCount: 3,
    }),
  });
  await store.messages.send(dlq.id, [
    { messageId: 'm-1', body: 'dead', md5OfBody: 'x', senderId: ACCOUNT, sentAt: now, visibleAt: now, receiveCount: 3 },
  ]);
  await store.close();
}

let server: ServerProcess;
let browser: Browser;
let page: Page;
let dataDir: string;
/** The console API requests the page made, in order. */
const requests: string[] = [];
const timings: string[] = [];
let navigationStart = 0;

before(async () => {
  if (skip) return;
  dataDir = mkdtempSync(join(tmpdir(), 'redrive-overview-'));
  await fillStore(dataDir);
  server = await startServerProcess({ dataDir });
  browser = await launchBrowser();
  page = await browser.newPage();
  page.on('request', (r) => {
    if (r.url().endsWith('/console/api')) requests.push(`${r.headers()['x-amz-target']} ${r.postData()}`);
  });
  // The page and its one API request, for the diagnostics: where the first page's time goes.
  page.on('requestfinished', (r) => {
    const path = r.url().replace(server.url, '');
    if (path !== '/console/queues' && path !== '/console/api') return;
    const t = r.timing();
    timings.push(
      `${path} asked at ${Math.round(t.startTime - navigationStart)} ms, answered in ${Math.round(t.responseEnd)} ms`,
    );
  });
  await page.clock.install();
});

after(async () => {
  await browser?.close();
  await server?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

const rowNames = () =>
  page.locator('#queues-table tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-queue')));
const range = () => page.textContent('#queue-range');
const rangeIs = (text: string) =>
  page.waitForFunction((t) => document.querySelector('#queue-range')?.textContent === t, text);

test('the first page shows 100 of 100,000 queues, with the DLQ holding messages as a card, from one request', {
  skip,
}, async (t) => {
  const started = Date.now();
  navigationStart = started;
  await openPage(page, `${server.url}/console/queues`);
  await page.waitForSelector('#queues-table tbody tr[data-queue="q-000000"]');
  t.diagnostic(`first page shown ${Date.now() - started} ms after navigation (not asserted: docs/performance.md)`);
  for (const line of timings) t.diagnostic(line);
  assert.equal((await rowNames()).length, 100);
  assert.equal(await range(), `1–100 of ${ALL}`);
  assert.match((await page.textContent('.dlq-card[data-queue="zz-dead"]')) ?? '', /1 message[\s\S]*fed by\s*zz-source/);
  assert.equal(requests.length, 1, requests.join('\n'));
  assert.match(requests[0]!, /^AmazonSQS.ListQueueSummaries .*"MaxResults":100/);
});

test('a filter and the next page are asked of the server', { skip }, async () => {
  await openPage(page, `${server.url}/console/queues`);
  await page.waitForSelector('#queues-table tbody tr');
  requests.length = 0;
  await page.fill('input[type=search]', 'Q-00012');
  await page.clock.runFor(300);
  await rangeIs('1–10 of 10');
  assert.deepEqual((await rowNames()).slice(0, 2), ['q-000120', 'q-000121'], 'any case');
  assert.match(requests.at(-1)!, /"NameContains":"Q-00012"/);
  await page.fill('input[type=search]', '');
  await page.clock.runFor(300);
  await rangeIs(`1–100 of ${ALL}`);
  await page.click('text=Next →');
  await rangeIs(`101–200 of ${ALL}`);
  assert.equal((await rowNames())[0], 'q-000100');
  assert.match(page.url(), /page=2/);
});

test('the last page is reached from its address, sorted by depth the DLQ leads', { skip }, async () => {
  await openPage(page, `${server.url}/console/queues?page=${QUEUES / 100}`);
  await rangeIs(`${LAST}–${ALL} of ${ALL}`);
  assert.deepEqual((await rowNames()).slice(-2), ['zz-dead', 'zz-source']);
  await openPage(page, `${server.url}/console/queues?sort=visible&dir=desc&size=50`);
  await rangeIs(`1–50 of ${ALL}`);
  assert.equal((await rowNames())[0], 'zz-dead');
});

test('an idle tab asks once per refresh; a hidden one asks nothing', { skip }, async () => {
  await openPage(page, `${server.url}/console/queues`);
  await page.waitForSelector('#queues-table tbody tr');
  requests.length = 0;
  await page.clock.runFor(60_000);
  await page.waitForTimeout(200); // let the last answer land
  // Every 5 s at most, less often when a refresh is slow (100 times its duration).
  assert.ok(requests.length >= 1 && requests.length <= 13, `60 s idle made ${requests.length} requests`);
  await page.evaluate(() => {
    Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => 'hidden' });
    document.dispatchEvent(new Event('visibilitychange'));
  });
  requests.length = 0;
  await page.clock.runFor(60_000);
  assert.equal(requests.length, 0, 'a hidden tab makes no request');
});

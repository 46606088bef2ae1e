/**
 * The console's overview in a real Chromium on a SQLite server holding BENCH_QUEUES queues
 * (comma-separated counts, default 1,000 and 10,000; created through the store, one
 * message in every tenth, sends counted on every hundredth so the rates have rows), for
 * docs/console.md: the time from navigation to the first page shown, the overview request
 * itself (median of 15 after 3 unmeasured: by name, filtered, sorted by sent rate), and
 * the server's CPU while one visible tab stays open for BENCH_IDLE_SECONDS (default 60),
 * and before, with no tab, over as long (what the server's own background work costs).
 *
 * `npx tsc -p tsconfig.json && node dist/bench/console-overview.js`
 */
import { performance } from 'node:perf_hooks';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { minuteOf } from '../src/engine/store/activity.js';
import { defaultAttributes } from '../src/engine/queues/queue-attributes.js';
import { SqliteStore } from '../src/stores/sqlite/store.js';
import { processCpuSeconds, startServerProcess } from './processes.js';
import { nodeArgs, serveArgs, sqsCall, tempDataDir } from './targets.js';
import { newQueue } from '../src/engine/store/queues.js';

const ACCOUNT = '000000000000';
const counts = (process.env.BENCH_QUEUES ?? '1000,10000').split(',').map(Number);
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 60);

async function fill(dir: string, n: number): Promise<void> {
  const store = new SqliteStore({ path: join(dir, 'redrive.db') });
  const now = Date.now();
  const ids: number[] = [];
  for (let i = 0; i < n; i += 1_000) {
    const made = await Promise.all(
      Array.from({ length: Math.min(1_000, n - i) }, (_, j) =>
        store.queues.create(
          newQueue(
            {
              accountId: ACCOUNT,
              region: 'us-east-1',
              name: `q-${String(i + j).padStart(6, '0')}`,
              fifo: false,
              attributes: defaultAttributes(false),
            },
            now,
          ),
        ),
      ),
    );
    ids.push(...made.map((m) => m.queue.id));
  }
  for (let i = 0; i < ids.length; i += 10) {
    await store.messages.send(ids[i]!, [
      {
        messageId: `m-${i}`,
        body: 'x',
        md5OfBody: 'x',
        senderId: ACCOUNT,
        sentAt: now,
        visibleAt: now,
        receiveCount: 0,
      },
    ]);
  }
  await store.activity.add(
    ids
      .filter((_, i) => i % 100 === 0)
      .map((queueId, i) => ({
        queueId,
        minute: minuteOf(now),
        sent: i + 1,
        received: 0,
        deleted: 0,
        deadLettered: 0,
        deadLetterArrivals: 0,
      })),
  );
  await store.close();
}

async function median(fn: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 3; i++) await fn();
  const times: number[] = [];
  for (let i = 0; i < 15; i++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  return times.sort((a, b) => a - b)[7]!;
}

const ms = (v: number) => `${Math.round(v)} ms`;

for (const n of counts) {
  const data = tempDataDir();
  await fill(data.dir, n);
  const server = await startServerProcess(serveArgs('sqlite', data.dir, 'process'), nodeArgs());
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-background-networking'],
  });
  try {
    const query = (extra: object) =>
      sqsCall(server.url, 'ListQueueSummaries', {
        AllRegions: true,
        IncludeDeadLetterQueues: true,
        MaxResults: 100,
        ...extra,
      });
    const cpuAt = async () => {
      const c0 = processCpuSeconds(server.pid);
      const t0 = Date.now();
      await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000));
      return (100 * (processCpuSeconds(server.pid) - c0)) / ((Date.now() - t0) / 1000);
    };
    const noTabCpu = await cpuAt();
    const cold0 = performance.now();
    await query({ SortBy: 'Name' });
    const cold = performance.now() - cold0;
    const byName = await median(() => query({ SortBy: 'Name' }));
    const filtered = await median(() => query({ SortBy: 'Name', NameContains: '0042' }));
    const byRate = await median(() => query({ SortBy: 'SentRate', SortOrder: 'Descending' }));
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const firstPages: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      await page.goto(`${server.url}/console/queues`);
      await page.waitForSelector('#queues-table tbody tr[data-queue]');
      firstPages.push(performance.now() - t0);
    }
    const firstPage = firstPages.sort((a, b) => a - b)[2]!;
    const requests: string[] = [];
    page.on('request', (r) => {
      if (r.url().endsWith('/console/api')) requests.push(r.url());
    });
    const idleCpu = await cpuAt();
    console.log(
      JSON.stringify({
        queues: n,
        coldFirstRequest: ms(cold),
        byName: ms(byName),
        filtered: ms(filtered),
        sortedBySentRate: ms(byRate),
        firstPageInBrowser: ms(firstPage),
        idleSeconds: IDLE_SECONDS,
        idleRequests: requests.length,
        idleCpuPercentOfCore: Number(idleCpu.toFixed(2)),
        noTabCpuPercentOfCore: Number(noTabCpu.toFixed(2)),
      }),
    );
  } finally {
    await browser.close();
    await server.stop();
    data.remove();
  }
}

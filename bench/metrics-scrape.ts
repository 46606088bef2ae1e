import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { openStore, startServer } from '../src/server/app.js';
import { defaults } from '../src/server/server-config.js';
import type { Store } from '../src/engine/store/store.js';
import type { NewMessage } from '../src/engine/kernel/types.js';
import { config } from './config.js';
import { createDatabase, postgresReachable } from './postgres.js';
import { tempDataDir } from './targets.js';
import { newQueue } from '../src/engine/store/queues.js';

/**
 * The scrape benchmark (BENCH_ONLY=scrape): GET /metrics over HTTP on a server with
 * BENCH_SCRAPE_QUEUES queues (10,000), first all empty, then with BENCH_SCRAPE_BACKLOG
 * messages (1,000,000) in one of them, on SQLite and on PostgreSQL. The data is loaded
 * through the store's own operations, then a real server is started on it. A scrape
 * whose time does not move with the backlog reads no queue's messages in full.
 */
const QUEUES = Math.round(Number(process.env.BENCH_SCRAPE_QUEUES ?? 10_000));
const BACKLOG = Math.round(Number(process.env.BENCH_SCRAPE_BACKLOG ?? 1_000_000));
const SCRAPES = Math.max(3, config.runs * 3);
const BATCH = 1_000;

export interface ScrapeFigures {
  storage: string;
  queues: number;
  backlog: number;
  /** Median and slowest of SCRAPES scrapes, in ms, with the body size and sample lines. */
  medianMs: number;
  maxMs: number;
  bytes: number;
  lines: number;
  /** PostgreSQL: `messages.depths` of the one queue holding the backlog, in ms. */
  depthOfBacklogMs?: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function createQueues(store: Store, n: number): Promise<number[]> {
  const ids: number[] = [];
  const now = Date.now();
  for (let i = 0; i < n; i += 100) {
    const made = await Promise.all(
      Array.from({ length: Math.min(100, n - i) }, (_, j) =>
        store.queues.create(
          newQueue(
            {
              accountId: defaults.accountId,
              region: defaults.region,
              name: `scrape-${String(i + j).padStart(5, '0')}`,
              fifo: false,
              attributes: {},
            },
            now,
          ),
        ),
      ),
    );
    ids.push(...made.map((m) => m.queue.id));
  }
  return ids;
}

async function preload(store: Store, queueId: number, n: number, log: (line: string) => void): Promise<void> {
  const start = performance.now();
  for (let sent = 0; sent < n; sent += BATCH) {
    const now = Date.now();
    const batch: NewMessage[] = Array.from({ length: Math.min(BATCH, n - sent) }, () => ({
      messageId: randomUUID(),
      body: 'x'.repeat(64),
      md5OfBody: 'd41d8cd98f00b204e9800998ecf8427e',
      senderId: defaults.accountId,
      sentAt: now,
      visibleAt: now,
    }));
    await store.messages.send(queueId, batch);
    if ((sent / BATCH) % 200 === 0)
      log(`  preload ${sent.toLocaleString('en-US')} (${Math.round(performance.now() - start) / 1000} s)`);
  }
}

async function timeScrapes(
  storage: string,
  dataDir: string,
): Promise<Omit<ScrapeFigures, 'storage' | 'queues' | 'backlog'>> {
  const server = await startServer({ ...defaults, port: 0, storage, storageFromFlag: true, dataDir, logLevel: 'warn' });
  try {
    const times: number[] = [];
    let text = '';
    await (await fetch(`${server.url}/metrics`)).text(); // warm-up: JIT, caches
    for (let i = 0; i < SCRAPES; i++) {
      const t = performance.now();
      text = await (await fetch(`${server.url}/metrics`)).text();
      times.push(performance.now() - t);
    }
    return {
      medianMs: median(times),
      maxMs: Math.max(...times),
      bytes: Buffer.byteLength(text),
      lines: text.split('\n').filter((l) => l && !l.startsWith('#')).length,
    };
  } finally {
    await server.stop();
  }
}

async function benchStore(storage: 'sqlite' | 'postgres', log: (line: string) => void): Promise<ScrapeFigures[]> {
  const dir = tempDataDir();
  const db = storage === 'postgres' ? await createDatabase() : undefined;
  const url = db?.url ?? 'sqlite';
  const config = { ...defaults, storage: url, dataDir: dir.dir };
  try {
    let store = await openStore(config);
    const ids = await createQueues(store, QUEUES);
    await store.close();
    const out: ScrapeFigures[] = [];
    out.push({ storage, queues: QUEUES, backlog: 0, ...(await timeScrapes(url, dir.dir)) });
    log(`[scrape] ${storage}: ${QUEUES} empty queues: median ${out[0]!.medianMs.toFixed(1)} ms`);
    store = await openStore(config);
    await preload(store, ids[0]!, BACKLOG, log);
    let depthOfBacklogMs: number | undefined;
    if (storage === 'postgres') {
      const t: number[] = [];
      for (let i = 0; i < 5; i++) {
        const s = performance.now();
        await store.messages.depths([ids[0]!], Date.now());
        t.push(performance.now() - s);
      }
      depthOfBacklogMs = median(t);
    }
    await store.close();
    out.push({ storage, queues: QUEUES, backlog: BACKLOG, ...(await timeScrapes(url, dir.dir)), depthOfBacklogMs });
    log(
      `[scrape] ${storage}: ${QUEUES} queues, ${BACKLOG.toLocaleString('en-US')} messages in one: median ${out[1]!.medianMs.toFixed(1)} ms`,
    );
    return out;
  } finally {
    dir.remove();
    await db?.drop();
  }
}

export async function runScrapeBench(log: (line: string) => void): Promise<ScrapeFigures[]> {
  const figures = await benchStore('sqlite', log);
  if (await postgresReachable()) figures.push(...(await benchStore('postgres', log)));
  else log('[scrape] PostgreSQL unreachable: skipped');
  return figures;
}

export function formatScrape(figures: ScrapeFigures[]): string {
  const rows = figures.map(
    (f) =>
      `| ${f.storage} | ${f.queues.toLocaleString('en-US')} | ${f.backlog.toLocaleString('en-US')} | ${f.medianMs.toFixed(1)} | ${f.maxMs.toFixed(1)} | ${(f.bytes / 1e6).toFixed(1)} MB, ${f.lines.toLocaleString('en-US')} samples |${f.depthOfBacklogMs === undefined ? '' : ` depths() of the big queue: ${f.depthOfBacklogMs.toFixed(1)} ms |`}`,
  );
  return [
    '| store | queues | backlog | median ms | max ms | scrape |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows,
  ].join('\n');
}

import { loadavg } from 'node:os';
import { runBacklog, type BacklogFigures } from './backlog.js';
import { formatDiskBytes, runDiskBytes, type DiskBytes } from './disk-bytes.js';
import { runConsoleBench, writeConsoleResults } from './console.js';
import { cases, crossNodeHalfCase, halfRateCase, type Case } from './cases.js';
import { config } from './config.js';
import { formatManyQueues, runManyQueues } from './many-queues.js';
import type { Measurement } from './measure.js';
import { measureCase } from './measure-case.js';
import { formatFair, runFairBench } from './fair-queues.js';
import { formatScrape, runScrapeBench } from './metrics-scrape.js';
import { postgresReachable } from './postgres.js';
import { formatPostgres, postgresRows } from './postgres-report.js';
import { formatPeers } from './peers-report.js';
import { killAll, runCleanups } from './processes.js';
import { formatBacklog, formatBaselines, formatTable, summarise, tableRows } from './report.js';
import { resultsFile, writeResults, type CaseOutcome } from './results.js';
import {
  pgBossTarget,
  rabbitTarget,
  reachable,
  startCanned,
  startFauxqs,
  startRedrive,
  type Target,
} from './targets.js';

/**
 * `npm run bench`: every case BENCH_RUNS times, each run on a fresh server with its
 * own load child, then medians, a table, and bench/results/latest.json.
 */
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

async function startTarget(c: Case, run: number): Promise<Target> {
  if (c.system === 'redrive') return startRedrive(c.redrive!);
  if (c.system === 'canned') return startCanned();
  if (c.system === 'pgboss') return pgBossTarget();
  if (c.system === 'fauxqs') return startFauxqs();
  return rabbitTarget(config.rabbitUrl, run);
}

async function runCase(c: Case, run: number, rate?: number): Promise<Measurement> {
  return measureCase(c, await startTarget(c, run), rate);
}

function describe(m: Measurement): string {
  const r = m.raw.receives
    ? `, ${(m.raw.receives / Math.max(1, m.raw.consumed)).toFixed(2)} receives/msg (${Math.round((100 * m.raw.emptyReceives) / m.raw.receives)}% empty)`
    : '';
  const rt = m.roundTripsPerMessage === undefined ? '' : `, ${m.roundTripsPerMessage.toFixed(2)} round trips/msg`;
  const db =
    m.databaseCpu === undefined
      ? ''
      : `, db CPU ${Math.round(m.databaseCpu)}% (${Math.round(m.databaseMicrosPerMessage ?? 0)} µs/msg${rt})`;
  const lat = m.latency ? ` p50 ${m.latency.p50.toFixed(2)} ms p99 ${m.latency.p99.toFixed(2)} ms` : '';
  const cpu = m.serverCpu === undefined ? 'n/a' : `${Math.round(m.serverCpu)}%`;
  const errors = m.errors ? ` ERRORS ${m.errors}: ${m.firstError}` : '';
  const per = m.serverMicrosPerMessage === undefined ? '' : ` (${Math.round(m.serverMicrosPerMessage)} µs/msg)`;
  const wal =
    m.walBytesPerMessage === undefined
      ? ''
      : `, WAL ${Math.round(m.walBytesPerMessage)} B/msg, ${m.commitsPerMessage ? (1 / m.commitsPerMessage).toFixed(1) : 'n/a'} msg/commit`;
  const sent = m.sentRate !== m.rate ? ` (sent ${Math.round(m.sentRate)}/s)` : '';
  return `${Math.round(m.rate)} msg/s${sent}, ${Math.round(m.requestsPerSecond)} req/s, server CPU ${cpu}${per}, client CPU ${Math.round(m.clientCpu)}%${db}${wal}, others ${Math.round(m.otherCpu ?? 0)}%${lat}${r}${errors}`;
}

async function repeat(c: Case, outcome: CaseOutcome, run: number, rate?: number): Promise<void> {
  const label = `[run ${run}/${config.runs}] ${c.id.padEnd(14)}`;
  try {
    const m = await runCase(c, run, rate);
    outcome.runs.push(m);
    console.log(`${label} ${describe(m)}`);
  } catch (e) {
    outcome.failures.push(e instanceof Error ? e.message : String(e));
    console.log(`${label} FAILED: ${e instanceof Error ? e.message : e}`);
  }
}

async function main(): Promise<void> {
  if (!LOOPBACK.has(new URL(config.rabbitUrl).hostname))
    throw new Error('BENCH_RABBIT_URL must point at a loopback address');
  if (!LOOPBACK.has(new URL(config.postgresUrl).hostname))
    throw new Error('BENCH_POSTGRES_URL must point at a loopback address');
  const rabbitUp = await reachable(config.rabbitUrl);
  const postgresUp = await postgresReachable();
  const outcomes: Record<string, CaseOutcome> = {};
  for (const c of [...cases, halfRateCase, crossNodeHalfCase]) {
    const skipped =
      config.only && !config.only.has(c.id)
        ? 'not in BENCH_ONLY'
        : c.system === 'rabbit' && !rabbitUp
          ? 'RabbitMQ unreachable'
          : (c.redrive?.storage === 'postgres' || c.system === 'pgboss') && !postgresUp
            ? 'PostgreSQL unreachable'
            : undefined;
    outcomes[c.id] = { runs: [], failures: [], skipped };
  }
  // Load averages before and after: a rough record of how busy the shared machine was.
  const load: { before: number[]; after?: number[] } = { before: loadavg() };
  const perRun = config.warmupSeconds + config.seconds + 1.5;
  console.log(
    `Redrive benchmark: ${config.runs} runs × ${cases.length + 1} cases × ~${perRun} s ≈ ${Math.ceil((config.runs * (cases.length + 1) * perRun) / 60)} min` +
      `, then W4 with backlogs of ${config.backlogSmall.toLocaleString('en-US')} and ${config.backlog.toLocaleString('en-US')}` +
      `${rabbitUp ? '' : ' (RabbitMQ unreachable: its figures are n/a)'}${postgresUp ? '' : ' (PostgreSQL unreachable: its figures are n/a)'}`,
  );

  // Round-robin rather than case after case: a burst of noise from other work on the
  // machine then spreads over several cases instead of sinking all runs of one.
  for (let run = 1; run <= config.runs; run++) {
    for (const c of cases) if (!outcomes[c.id]!.skipped) await repeat(c, outcomes[c.id]!, run);
  }
  const w3 = summarise(outcomes.W3!.runs);
  const halfRate = w3 ? w3.rate / 2 : undefined;
  for (let run = 1; run <= config.runs && halfRate && !outcomes[halfRateCase.id]!.skipped; run++)
    await repeat(halfRateCase, outcomes[halfRateCase.id]!, run, halfRate);
  const pg2 = summarise(outcomes['W3-pg-2']!.runs);
  const pgHalfRate = pg2 ? pg2.rate / 2 : undefined;
  for (let run = 1; run <= config.runs && pgHalfRate && !outcomes[crossNodeHalfCase.id]!.skipped; run++) {
    await repeat(crossNodeHalfCase, outcomes[crossNodeHalfCase.id]!, run, pgHalfRate);
  }

  // W4 once per size (a million-message preload and drain take minutes): small first.
  const backlog: BacklogFigures[] = [];
  const backlogFailures: string[] = [];
  const sizes =
    config.only && !config.only.has('W4')
      ? []
      : [...new Set([config.backlogSmall, config.backlog])].sort((a, b) => a - b);
  for (const size of sizes) {
    console.log(`[W4] backlog of ${size.toLocaleString('en-US')}`);
    try {
      backlog.push(await runBacklog(size, (line) => console.log(line)));
    } catch (e) {
      backlogFailures.push(e instanceof Error ? e.message : String(e));
      console.log(`[W4] backlog of ${size} FAILED: ${e instanceof Error ? e.message : e}`);
    }
  }
  // The scrape benchmark (docs/performance.md): only when asked for, as its preload takes minutes.
  const scrape = config.only?.has('scrape') ? await runScrapeBench((line) => console.log(line)) : [];
  // Fair queues' dwell times, on and off (bench/fair-queues.ts): only when asked for.
  const fair = config.only?.has('fair') ? await runFairBench((line) => console.log(line)) : [];
  // The console's requests on 1,000 queues and a BENCH_BACKLOG-message DLQ (bench/console.ts).
  if (!config.only || config.only.has('console')) {
    try {
      writeConsoleResults(await runConsoleBench((line) => console.log(line)));
    } catch (e) {
      console.log(`[console] FAILED: ${e instanceof Error ? e.message : e}`);
    }
  }
  // Disk bytes per message by phase and body size (disk-bytes.ts), once per size.
  let disk: DiskBytes[] = [];
  if (!config.only || config.only.has('disk')) {
    try {
      disk = await runDiskBytes((line) => console.log(line));
    } catch (e) {
      console.log(`[disk] FAILED: ${e instanceof Error ? e.message : e}`);
    }
  }
  // W6: many idle queues (many-queues.ts), once.
  if (!config.only || config.only.has('W6')) {
    try {
      console.log(formatManyQueues(await runManyQueues((line) => console.log(line))));
    } catch (e) {
      console.log(`[W6] FAILED: ${e instanceof Error ? e.message : e}`);
    }
  }
  load.after = loadavg();

  for (const o of Object.values(outcomes)) o.summary = summarise(o.runs);
  const table = tableRows(outcomes, backlog);
  console.log(`\n${formatTable(table)}\n\n${formatBaselines(outcomes)}\n`);
  console.log(`${formatPeers(outcomes)}\n`);
  const postgres = postgresRows(outcomes);
  if (postgres.length) console.log(`${formatPostgres(postgres)}\n`);
  if (backlog.length) console.log(`${formatBacklog(backlog)}\n`);
  if (scrape.length) console.log(`${formatScrape(scrape)}\n`);
  if (fair.length) console.log(`${formatFair(fair)}\n`);
  if (disk.length) console.log(`${formatDiskBytes(disk)}\n`);
  writeResults(outcomes, table, {
    halfRate,
    pgHalfRate,
    postgres,
    load,
    backlog,
    disk,
    backlogFailures: backlogFailures.length ? backlogFailures : undefined,
  });
  console.log(`wrote ${resultsFile}`);
}

main().then(
  () => process.exit(0),
  async (e) => {
    console.error(e);
    killAll();
    await runCleanups();
    process.exit(1);
  },
);

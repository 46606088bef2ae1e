import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cases, halfRateCase, type Case } from './cases.js';
import { config } from './config.js';
import { measure, type Measurement } from './measure.js';
import { killAll } from './processes.js';
import { formatBaselines, formatTable, summarise, tableRows, type Outcome } from './report.js';
import { rabbitTarget, reachable, startCanned, startRedrive, type Target } from './targets.js';

/**
 * `npm run bench`: every case BENCH_RUNS times, each run on a fresh server with its
 * own load child, then medians, a table, and bench/results/latest.json.
 */
const resultsFile = fileURLToPath(new URL('../../bench/results/latest.json', import.meta.url));
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

async function startTarget(c: Case, run: number): Promise<Target> {
  if (c.system === 'redrive') return startRedrive(c.redrive!);
  if (c.system === 'canned') return startCanned();
  return rabbitTarget(config.rabbitUrl, run);
}

async function runCase(c: Case, run: number, rate?: number): Promise<Measurement> {
  const target = await startTarget(c, run);
  try {
    return await measure({
      kind: c.kind, target: target.url, queue: target.queue, producers: c.producers, consumers: c.consumers,
      bodyBytes: config.bodyBytes, warmupSeconds: config.warmupSeconds, seconds: config.seconds, rate,
    }, c.metric, target.pid);
  } finally {
    await target.stop();
  }
}

function describe(m: Measurement): string {
  const lat = m.latency ? ` p50 ${m.latency.p50.toFixed(2)} ms p99 ${m.latency.p99.toFixed(2)} ms` : '';
  const cpu = m.serverCpu === undefined ? 'n/a' : `${Math.round(m.serverCpu)}%`;
  const errors = m.errors ? ` ERRORS ${m.errors}: ${m.firstError}` : '';
  return `${Math.round(m.rate)} msg/s, ${Math.round(m.requestsPerSecond)} req/s, server CPU ${cpu}, client CPU ${Math.round(m.clientCpu)}%${lat}${errors}`;
}

type CaseOutcome = Outcome & { failures: string[] };

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
  if (!LOOPBACK.has(new URL(config.rabbitUrl).hostname)) throw new Error('BENCH_RABBIT_URL must point at a loopback address');
  const rabbitUp = await reachable(config.rabbitUrl);
  const outcomes: Record<string, CaseOutcome> = {};
  for (const c of [...cases, halfRateCase]) {
    outcomes[c.id] = { runs: [], failures: [], skipped: c.system === 'rabbit' && !rabbitUp ? 'RabbitMQ unreachable' : undefined };
  }
  // Load averages before and after: a rough record of how busy the shared machine was.
  const load: { before: number[]; after?: number[] } = { before: loadavg() };
  const perRun = config.warmupSeconds + config.seconds + 1.5;
  console.log(`Redrive benchmark: ${config.runs} runs × ${cases.length + 1} cases × ~${perRun} s ≈ ${Math.ceil((config.runs * (cases.length + 1) * perRun) / 60)} min`
    + `${rabbitUp ? '' : ' (RabbitMQ unreachable: its figures are n/a)'}`);

  // Round-robin rather than case after case: a burst of noise from other work on the
  // machine then spreads over several cases instead of sinking all runs of one.
  for (let run = 1; run <= config.runs; run++) {
    for (const c of cases) if (!outcomes[c.id]!.skipped) await repeat(c, outcomes[c.id]!, run);
  }
  const w3 = summarise(outcomes.W3!.runs);
  const halfRate = w3 ? w3.rate / 2 : undefined;
  for (let run = 1; run <= config.runs && halfRate; run++) await repeat(halfRateCase, outcomes[halfRateCase.id]!, run, halfRate);
  load.after = loadavg();

  for (const o of Object.values(outcomes)) o.summary = summarise(o.runs);
  const table = tableRows(outcomes);
  console.log(`\n${formatTable(table)}\n\n${formatBaselines(outcomes)}\n`);
  writeResults(outcomes, table, { halfRate, load });
  console.log(`wrote ${resultsFile}`);
}

function git(...args: string[]): string {
  try {
    return execFileSync('git', args, { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

function writeResults(outcomes: Record<string, CaseOutcome>, table: ReturnType<typeof tableRows>, extra: object): void {
  const round = (n: number | undefined, digits = 0) => (n === undefined ? undefined : Number(n.toFixed(digits)));
  const result = {
    date: new Date().toISOString(),
    commit: git('rev-parse', '--short', 'HEAD'),
    // Uncommitted changes mean the figures may not match the commit exactly.
    dirty: git('status', '--porcelain', '--', 'src') !== '',
    machine: { cores: cpus().length, cpu: cpus()[0]?.model, memoryGiB: round(totalmem() / 2 ** 30, 1), node: process.version },
    settings: { seconds: config.seconds, warmupSeconds: config.warmupSeconds, runs: config.runs, bodyBytes: config.bodyBytes },
    ...extra,
    table,
    cases: Object.fromEntries(Object.entries(outcomes).map(([id, o]) => [id, {
      skipped: o.skipped,
      failures: o.failures.length ? o.failures : undefined,
      median: o.summary,
      runs: o.runs.map((m) => ({
        rate: round(m.rate), requestsPerSecond: round(m.requestsPerSecond), serverCpu: round(m.serverCpu), clientCpu: round(m.clientCpu),
        latencyP50: round(m.latency?.p50, 3), latencyP99: round(m.latency?.p99, 3), errors: m.errors, firstError: m.firstError,
      })),
    }])),
  };
  mkdirSync(dirname(resultsFile), { recursive: true });
  writeFileSync(resultsFile, `${JSON.stringify(result, null, 2)}\n`);
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    killAll();
    process.exit(1);
  },
);

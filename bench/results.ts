import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { config } from './config.js';
import type { Measurement } from './measure.js';
import type { Outcome, TableRow } from './report.js';

/** bench/results/latest.json: every figure of a run, with what is needed to reproduce it. */

export type CaseOutcome = Outcome & { failures: string[] };

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
export const resultsFile = fileURLToPath(new URL('../../bench/results/latest.json', import.meta.url));

const round = (n: number | undefined, digits = 0) => (n === undefined ? undefined : Number(n.toFixed(digits)));

function git(...args: string[]): string {
  try {
    return execFileSync('git', args, { encoding: 'utf8', cwd: repoRoot, stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return 'unknown';
  }
}

export function writeResults(outcomes: Record<string, CaseOutcome>, table: TableRow[], extra: object): void {
  const result = {
    date: new Date().toISOString(),
    // BENCH_COMMIT names the commit when the run is made from an exported tree (git archive).
    commit: process.env.BENCH_COMMIT ?? git('rev-parse', '--short', 'HEAD'),
    // Uncommitted changes under src/ mean the figures may not match the commit exactly.
    dirty: process.env.BENCH_COMMIT ? false : git('status', '--porcelain', '--', 'src') !== '',
    machine: {
      cores: cpus().length,
      cpu: cpus()[0]?.model,
      memoryGiB: round(totalmem() / 2 ** 30, 1),
      node: process.version,
    },
    settings: {
      seconds: config.seconds,
      warmupSeconds: config.warmupSeconds,
      runs: config.runs,
      bodyBytes: config.bodyBytes,
      backlog: config.backlog,
      backlogSmall: config.backlogSmall,
    },
    ...extra,
    table,
    cases: Object.fromEntries(
      Object.entries(outcomes).map(([id, o]) => [
        id,
        {
          skipped: o.skipped,
          failures: o.failures.length ? o.failures : undefined,
          median: o.summary,
          runs: o.runs.map(runRecord),
        },
      ]),
    ),
  };
  mkdirSync(dirname(resultsFile), { recursive: true });
  writeFileSync(resultsFile, `${JSON.stringify(result, null, 2)}\n`);
}

function runRecord(m: Measurement) {
  return {
    rate: round(m.rate),
    sentRate: round(m.sentRate),
    requestsPerSecond: round(m.requestsPerSecond),
    serverCpu: round(m.serverCpu),
    clientCpu: round(m.clientCpu),
    serverMicrosPerMessage: round(m.serverMicrosPerMessage, 1),
    databaseCpu: round(m.databaseCpu),
    databaseMicrosPerMessage: round(m.databaseMicrosPerMessage),
    roundTripsPerMessage: round(m.roundTripsPerMessage, 2),
    walBytesPerMessage: round(m.walBytesPerMessage),
    commitsPerMessage: round(m.commitsPerMessage, 4),
    checkpointsPerMessage: round(m.checkpointsPerMessage, 5),
    otherCpu: round(m.otherCpu),
    seconds: round(m.seconds, 2),
    latencyP50: round(m.latency?.p50, 3),
    latencyP99: round(m.latency?.p99, 3),
    receives: m.raw.receives || undefined,
    emptyReceives: m.raw.receives ? m.raw.emptyReceives : undefined,
    errors: m.errors,
    firstError: m.firstError,
  };
}

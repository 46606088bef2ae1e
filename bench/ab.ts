import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { cases } from './cases.js';
import { config } from './config.js';
import type { Measurement } from './measure.js';
import { measureCase } from './measure-case.js';
import { int, markdown, micros, ms, pct } from './report.js';
import { startRedrive } from './targets.js';
import { median } from './stats.js';

/**
 * An interleaved A/B of two server builds under the same benchmark code: each round runs
 * every case on build A and on build B back to back (AB, then BA, then AB…), so noise
 * from other work on the machine falls on both alike; the ratios are medians of each
 * round's own B÷A.
 *
 *   BENCH_AB_A=/tmp/perf-a/dist BENCH_AB_B=dist BENCH_AB_CASES=W1,W3 BENCH_AB_ROUNDS=4 node dist/bench/ab.js
 *
 * A build is a checkout's `dist` (npx tsc there); B defaults to this checkout's.
 * BENCH_AB_A_ARGS and BENCH_AB_B_ARGS add `redrive serve` flags to one side, so one build
 * can be compared with itself under other flags:
 *
 *   BENCH_AB_A=dist BENCH_AB_B_ARGS='--threads 2' BENCH_AB_CASES=W1-wrk,W3 node dist/bench/ab.js
 */
const builds = { A: process.env.BENCH_AB_A, B: process.env.BENCH_AB_B ?? '' } as const;
if (!builds.A) throw new Error('BENCH_AB_A must name the dist directory of build A');
const ids = (process.env.BENCH_AB_CASES ?? 'W1,W3').split(',').map((s) => s.trim());
const rounds = Math.round(Number(process.env.BENCH_AB_ROUNDS ?? 4));
const chosen = ids.map((id) => {
  const c = cases.find((x) => x.id === id);
  if (!c?.redrive) throw new Error(`${id} is not a Redrive case of cases.ts`);
  return c;
});

const serverArgs = { A: process.env.BENCH_AB_A_ARGS ?? '', B: process.env.BENCH_AB_B_ARGS ?? '' } as const;

async function once(side: 'A' | 'B', id: string): Promise<Measurement> {
  const c = chosen.find((x) => x.id === id)!;
  const dist = builds[side];
  if (dist) process.env.BENCH_SERVER_DIST = resolve(dist);
  else delete process.env.BENCH_SERVER_DIST;
  process.env.BENCH_SERVER_ARGS = serverArgs[side];
  return measureCase(c, await startRedrive(c.redrive!));
}

const runs: Record<string, { A: (Measurement | undefined)[]; B: (Measurement | undefined)[] }> = Object.fromEntries(
  ids.map((id) => [id, { A: [], B: [] }]),
);
const load = [loadavg()[0]];
for (let round = 0; round < rounds; round++) {
  for (const id of ids) {
    for (const side of round % 2 === 0 ? (['A', 'B'] as const) : (['B', 'A'] as const)) {
      let m: Measurement;
      try {
        m = await once(side, id);
      } catch (e) {
        // A run that fails (a server too slow to start on a busy machine) leaves a gap; its pair's ratio is skipped.
        console.log(
          `[round ${round + 1}/${rounds}] ${id} ${side}: FAILED: ${e instanceof Error ? e.message.split('\n')[0] : e}`,
        );
        runs[id]![side].push(undefined);
        continue;
      }
      runs[id]![side].push(m);
      console.log(
        `[round ${round + 1}/${rounds}] ${id} ${side}: ${int(m.rate)} msg/s, ${micros(m.serverMicrosPerMessage)} µs/msg, ` +
          `WAL ${int(m.walBytesPerMessage)} B/msg, p99 ${ms(m.latency?.p99)} ms, others ${pct(m.otherCpu)}`,
      );
    }
  }
  load.push(loadavg()[0]);
}

const med = (xs: (number | undefined)[]) => {
  const d = xs.filter((x): x is number => x !== undefined && Number.isFinite(x));
  return d.length ? median(d) : undefined;
};
const ratio = (id: string, f: (m: Measurement) => number | undefined) =>
  med(
    runs[id]!.A.map((a, i) => {
      const b = runs[id]!.B[i];
      const x = a && f(a);
      const y = b && f(b);
      return x && y ? y / x : undefined;
    }),
  );
const fmt = (r: number | undefined) => (r === undefined ? 'n/a' : `${r.toFixed(2)}×`);
const lines: string[][] = [];
for (const id of ids) {
  for (const side of ['A', 'B'] as const) {
    const ms_ = runs[id]![side].filter((m): m is Measurement => m !== undefined);
    lines.push([
      `${id} ${side}`,
      int(med(ms_.map((m) => m.rate))),
      micros(med(ms_.map((m) => m.serverMicrosPerMessage))),
      int(med(ms_.map((m) => m.walBytesPerMessage))),
      ms(med(ms_.map((m) => m.latency?.p99))),
      pct(med(ms_.map((m) => m.otherCpu))),
    ]);
  }
  lines.push([
    `${id} B÷A (median of rounds)`,
    fmt(ratio(id, (m) => m.rate)),
    fmt(ratio(id, (m) => m.serverMicrosPerMessage)),
    fmt(ratio(id, (m) => m.walBytesPerMessage)),
    fmt(ratio(id, (m) => m.latency?.p99)),
    '',
  ]);
}
console.log(
  `\nA = ${builds.A} ${serverArgs.A}, B = ${builds.B || 'this checkout'} ${serverArgs.B}; ${rounds} rounds of ${config.warmupSeconds} + ${config.seconds} s; load average 1 min: ${load.map((l) => l!.toFixed(1)).join(' → ')}\n`,
);
console.log(markdown(['case', 'msg/s', 'server µs/msg', 'WAL B/msg', 'p99 ms', 'others CPU'], lines));
process.exit(0);

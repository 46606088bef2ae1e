/**
 * Benchmark settings, read once from the environment. The defaults keep a whole
 * `npm run bench` at about 3–5 minutes on a 2-core machine.
 */
function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, got "${raw}"`);
  return n;
}

export const config = {
  /** Measured window of every run, in seconds. */
  seconds: envNumber('BENCH_SECONDS', 5),
  /** Unmeasured warm-up before each window (JIT, SQLite page cache, keep-alive sockets). */
  warmupSeconds: envNumber('BENCH_WARMUP_SECONDS', 1),
  /** Runs per workload; the report shows the median, since the machine is shared and noisy. */
  runs: Math.round(envNumber('BENCH_RUNS', 3)),
  /** Every message body is this many bytes (BENCH_BODY_BYTES, for a run at another size, e.g. a 64 KiB A/B). */
  bodyBytes: Math.round(envNumber('BENCH_BODY_BYTES', 256)),
  rabbitUrl: process.env.BENCH_RABBIT_URL ?? 'amqp://guest:guest@127.0.0.1:5672',
  /**
   * A PostgreSQL server's maintenance database (loopback only). Each Postgres run creates
   * its own database there (redrive_bench_<pid>_<random>) and drops it afterwards.
   */
  postgresUrl: process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  /** W4: messages preloaded, then drained (1,000,000 by default; less for a quick run). */
  backlog: Math.round(envNumber('BENCH_BACKLOG', 1_000_000)),
  /** W4's comparison drain: the same procedure on a queue this small. */
  backlogSmall: Math.round(envNumber('BENCH_BACKLOG_SMALL', 50_000)),
  /** The most a preload or a drain may take before it is cut short (and reported as incomplete). */
  backlogLimitSeconds: envNumber('BENCH_BACKLOG_LIMIT_SECONDS', 300),
  /**
   * BENCH_ONLY=W5,W3-pg,W4,console: run only these cases (ids as in cases.ts; W4 is the backlog,
   * console the console's requests on 1,000 queues and a BENCH_BACKLOG-message DLQ,
   * W3-half needs W3). For quick checks while working on the benchmark; not for the table.
   */
  only: process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',').map((s) => s.trim())) : undefined,
  /** A child that has not answered by then is killed: no loop may run forever. */
  childTimeoutMs: 60_000,
};

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
  /** Every message body is this many bytes. */
  bodyBytes: 256,
  rabbitUrl: process.env.BENCH_RABBIT_URL ?? 'amqp://guest:guest@127.0.0.1:5672',
  /** A child that has not answered by then is killed: no loop may run forever. */
  childTimeoutMs: 60_000,
};

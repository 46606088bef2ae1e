import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { config } from './config.js';
import { machineBusySeconds, processCpuSeconds, stopProcess, track } from './processes.js';
import { foreignPostgresPids, postgresCpu, postgresCpuBetween } from './postgres.js';
import type { ChildMessage, LoadResult, LoadSpec } from './protocol.js';
import { markRoundTrips, roundTripsBetweenMarks } from './round-trips.js';
import { WalCounter, type WalFigures } from './wal.js';

/** One run's figures, normalised per second of its window. */
export interface Measurement {
  /** Messages/s: sent for send workloads, consumed for cycles. */
  rate: number;
  /** Messages/s accepted by the server; above `rate` in a cycle, a backlog was growing. */
  sentRate: number;
  requestsPerSecond: number;
  /** CPU as a percentage of one core; 200 % is both cores of this machine. */
  serverCpu?: number;
  clientCpu: number;
  /** Server CPU per message in microseconds: less sensitive to a busy machine than msg/s. */
  serverMicrosPerMessage?: number;
  /** CPU of every `postgres` process during the window (% of one core), for Postgres runs. */
  databaseCpu?: number;
  /** Database CPU per message in microseconds (Postgres runs). */
  databaseMicrosPerMessage?: number;
  /** Round trips to PostgreSQL per message, counted in its clients (round-trips.ts). */
  roundTripsPerMessage?: number;
  /** SQLite: bytes appended to the write-ahead log per message (wal.ts). */
  walBytesPerMessage?: number;
  /** SQLite: write transactions per message (the inverse of the group commit's batch). */
  commitsPerMessage?: number;
  /** SQLite: checkpoints per message (each fsyncs the WAL and the database file). */
  checkpointsPerMessage?: number;
  /** CPU used by everything else on the machine during the window (% of one core): the noise. */
  otherCpu?: number;
  /** Length of the measured window in seconds (a preload or drain ends when its work is done). */
  seconds: number;
  latency?: LoadResult['latency'];
  errors: number;
  firstError?: string;
  raw: LoadResult;
}

const loadScript = fileURLToPath(new URL('./load.js', import.meta.url));

export interface MeasureOptions {
  /** Processes whose CPU is the server's (several for a multi-node run). */
  serverPids?: number[];
  /** The Postgres database the servers use: the machine's PostgreSQL server's CPU is measured too. */
  database?: string;
  /** Servers that count their round trips to PostgreSQL (round-trips.ts), asked at the window's start and end. */
  roundTripPids?: number[];
  /** A SQLite server's WAL index (`-shm`): its WAL bytes are counted over the window. */
  walIndex?: string;
}

/**
 * Forks a load child for `spec`, and reads the server's CPU time exactly when the child
 * says its window opens and closes, so both CPU figures cover the same seconds.
 */
export async function measure(
  spec: LoadSpec,
  metric: 'sent' | 'consumed',
  opts: MeasureOptions = {},
): Promise<Measurement> {
  const child = track(fork(loadScript, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
  const pids = opts.serverPids ?? [];
  const cpu = (): number | undefined => {
    if (pids.length === 0) return undefined;
    try {
      return pids.reduce((sum, pid) => sum + processCpuSeconds(pid), 0);
    } catch {
      return undefined;
    }
  };
  let cpuStart: number | undefined;
  let cpuEnd: number | undefined;
  let machineStart = 0;
  let machineEnd = 0;
  let dbStart: Map<number, number> | undefined;
  let dbEnd: Map<number, number> | undefined;
  let foreign: Promise<Set<number>> | undefined;
  const walCounter = opts.walIndex ? new WalCounter(opts.walIndex) : undefined;
  let wal: WalFigures | undefined;
  // A preload or drain may need far longer than a timed window; it is bounded all the same.
  const timeoutMs = Math.max(config.childTimeoutMs, (spec.warmupSeconds + spec.seconds) * 1000 + 30_000);
  const result = await new Promise<LoadResult>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`load child (${spec.kind}) did not finish within ${timeoutMs} ms`));
    }, timeoutMs);
    child.on('message', (m: ChildMessage) => {
      if (m.type === 'window-start') {
        cpuStart = cpu();
        machineStart = machineBusySeconds();
        markRoundTrips(opts.roundTripPids ?? []);
        walCounter?.start();
        if (opts.database) dbStart = postgresCpu();
      } else if (m.type === 'window-end') {
        cpuEnd = cpu();
        machineEnd = machineBusySeconds();
        markRoundTrips(opts.roundTripPids ?? []);
        wal = walCounter?.stop();
        if (opts.database) {
          dbEnd = postgresCpu();
          foreign = foreignPostgresPids(opts.database).catch(() => new Set<number>());
        }
      } else {
        clearTimeout(timer);
        if (m.type === 'result') resolve(m.result);
        else reject(new Error(`load child (${spec.kind}) failed: ${m.message}`));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`load child (${spec.kind}) exited with code ${code} before reporting`));
    });
    child.send(spec);
  }).finally(() => stopProcess(child, 2000));

  const s = result.seconds;
  const messages = metric === 'sent' ? result.sent : result.consumed;
  const serverSeconds = cpuStart !== undefined && cpuEnd !== undefined ? cpuEnd - cpuStart : undefined;
  const dbSeconds = dbStart && dbEnd ? postgresCpuBetween(dbStart, dbEnd, await foreign) : undefined;
  const roundTrips = opts.roundTripPids?.length ? await roundTripsBetweenMarks(opts.roundTripPids) : result.roundTrips;
  const other = machineEnd - machineStart - (serverSeconds ?? 0) - result.clientCpuSeconds - (dbSeconds ?? 0);
  return {
    rate: messages / s,
    sentRate: result.sent / s,
    requestsPerSecond: result.requests / s,
    serverCpu: serverSeconds === undefined ? undefined : (100 * serverSeconds) / s,
    clientCpu: (100 * result.clientCpuSeconds) / s,
    serverMicrosPerMessage:
      serverSeconds === undefined || messages === 0 ? undefined : (1e6 * serverSeconds) / messages,
    databaseCpu: dbSeconds === undefined ? undefined : (100 * dbSeconds) / s,
    databaseMicrosPerMessage: dbSeconds === undefined || messages === 0 ? undefined : (1e6 * dbSeconds) / messages,
    roundTripsPerMessage: roundTrips === undefined || messages === 0 ? undefined : roundTrips / messages,
    walBytesPerMessage: wal && messages ? wal.bytes / messages : undefined,
    commitsPerMessage: wal && messages ? wal.commits / messages : undefined,
    checkpointsPerMessage: wal && messages ? wal.checkpoints / messages : undefined,
    otherCpu: Math.max(0, (100 * other) / s),
    seconds: s,
    latency: result.latency,
    errors: result.errors,
    firstError: result.firstError,
    raw: result,
  };
}

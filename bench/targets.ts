import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDatabase } from './postgres.js';
import { startServerProcess, type ServerProcess } from './processes.js';
import { roundTripNodeArgs } from './round-trips.js';

/** The systems under test: a fresh Redrive per run, the canned ceiling, RabbitMQ. */

export interface Target {
  /** Base URL (HTTP) or amqp:// URL. */
  url: string;
  /** Queue URL (HTTP) or queue name (AMQP). */
  queue: string;
  /** Every node's base URL, when several servers share one store; else just `url`. */
  urls?: string[];
  /** Processes whose CPU is charged to the server, when known (one per node). */
  pids?: number[];
  /** The Postgres database of the run, if the store is the machine's PostgreSQL (its CPU is measured too). */
  database?: string;
  /** The SQLite WAL index (`redrive.db-shm`) of a file-backed Redrive: its WAL bytes per message are counted (wal.ts). */
  walIndex?: string;
  stop(): Promise<void>;
}

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
const ACCOUNT = '000000000000';
const QUEUE = 'bench';

// Data directories still in use; an interrupted run removes them on its way out too.
const dataDirs = new Set<() => void>();
process.once('exit', () => {
  for (const remove of [...dataDirs]) remove();
});

export interface RedriveOptions {
  /** `postgres`: a fresh database on BENCH_POSTGRES_URL's server, dropped after the run. */
  storage: 'sqlite' | 'memory' | 'postgres';
  durability: 'process' | 'power';
  /** Server processes on the one store (Postgres only); the load is split over them. */
  nodes?: number;
  /** A FIFO queue (`bench.fifo`) instead of a standard one. */
  fifo?: boolean;
  /** Load through the AMQP listener (`--amqp-port`) instead of SQS: the target is its amqp:// URL. */
  amqp?: boolean;
  /** `--threads`: HTTP threads in front of the owner thread (docs/scaling.md). */
  threads?: number;
}

export const nodeArgs = () => (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);

/**
 * The server's build: this checkout's, or BENCH_SERVER_DIST's (another checkout's `dist`,
 * for an A/B of two commits under the same benchmark code).
 */
const serverCli = () =>
  process.env.BENCH_SERVER_DIST ? join(process.env.BENCH_SERVER_DIST, 'src/cli/index.js') : here('../src/cli/index.js');

/** The `redrive serve` command line for one node. */
export function serveArgs(storage: string, dataDir: string, durability: string, port = 0): string[] {
  return [
    serverCli(),
    'serve',
    '--port',
    String(port),
    '--host',
    '127.0.0.1',
    '--storage',
    storage,
    '--data-dir',
    dataDir,
    '--durability',
    durability,
    // info, because the "listening" line is an info line; nothing is logged per request.
    '--log-level',
    'info',
  ];
}

/** A temporary data directory, removed by the returned function (or when the run exits). */
export function tempDataDir(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'redrive-bench-'));
  const remove = () => {
    rmSync(dir, { recursive: true, force: true });
    dataDirs.delete(remove);
  };
  dataDirs.add(remove);
  return { dir, remove };
}

/**
 * A new server on a new temporary data directory (or a new Postgres database), so no
 * run inherits another's data, WAL or page cache. BENCH_SERVER_NODE_ARGS passes flags to
 * the server's node, for example `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile it
 * under load.
 */
export async function startRedrive(opts: RedriveOptions): Promise<Target> {
  const data = tempDataDir();
  const servers: ServerProcess[] = [];
  let dropDatabase: (() => Promise<void>) | undefined;
  let database: string | undefined;
  const stop = async () => {
    await Promise.all(servers.map((s) => s.stop()));
    data.remove();
    await dropDatabase?.();
  };
  try {
    let storage: string = opts.storage;
    if (opts.storage === 'postgres') {
      const db = await createDatabase();
      dropDatabase = db.drop;
      database = db.name;
      storage = db.url;
    }
    // One after the other: the first node applies the schema, the others find it done.
    for (let i = 0; i < (opts.nodes ?? 1); i++) {
      const args = [
        ...serveArgs(storage, data.dir, opts.durability),
        ...(opts.amqp ? ['--amqp-port', '0'] : []),
        ...(opts.threads ? ['--threads', String(opts.threads)] : []),
        // More flags for every server, e.g. `--threads 2` for one side of an A/B (ab.ts).
        ...(process.env.BENCH_SERVER_ARGS ?? '').split(' ').filter(Boolean),
      ];
      // On PostgreSQL each node counts its round trips to the database (round-trips.ts).
      const extra = opts.storage === 'postgres' ? roundTripNodeArgs() : [];
      servers.push(await startServerProcess(args, [...extra, ...nodeArgs()]));
    }
    const urls = servers.map((s) => s.url);
    const amqpPort = servers[0]!.amqpPort;
    if (opts.amqp) {
      if (!amqpPort) throw new Error('the server logged no AMQP port');
      // The queue is declared by the load child (durable, as RabbitMQ's is): a name, not a URL.
      return { url: `amqp://guest:guest@127.0.0.1:${amqpPort}`, queue: QUEUE, pids: servers.map((s) => s.pid), stop };
    }
    return {
      url: urls[0]!,
      urls,
      queue: await createQueue(urls[0]!, opts.fifo),
      pids: servers.map((s) => s.pid),
      database,
      walIndex: opts.storage === 'sqlite' ? join(data.dir, 'redrive.db-shm') : undefined,
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}

/** One SQS JSON-protocol request from the orchestrator (set-up and checks, not load). */
export async function sqsCall(url: string, action: string, body: object): Promise<Record<string, unknown>> {
  const res = await fetch(`${url}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': `AmazonSQS.${action}` },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`${action} failed: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

export async function createQueue(url: string, fifo = false, name = QUEUE): Promise<string> {
  const body = fifo ? { QueueName: `${name}.fifo`, Attributes: { FifoQueue: 'true' } } : { QueueName: name };
  const { QueueUrl } = (await sqsCall(url, 'CreateQueue', body)) as { QueueUrl?: string };
  if (!QueueUrl) throw new Error('CreateQueue returned no QueueUrl');
  return QueueUrl;
}

export async function startCanned(): Promise<Target> {
  const server = await startServerProcess([here('./canned-server.js')]);
  return { url: server.url, queue: `${server.url}/${ACCOUNT}/${QUEUE}`, pids: [server.pid], stop: server.stop };
}

/**
 * fauxqs (a devDependency), an in-memory SQS emulator on Node: the peer that keeps no
 * data on disk. Started through fauxqs-server.ts, so that it listens on a free port and
 * logs nothing per request.
 */
export async function startFauxqs(): Promise<Target> {
  const server = await startServerProcess([here('./fauxqs-server.js')]);
  try {
    return { url: server.url, queue: await createQueue(server.url), pids: [server.pid], stop: server.stop };
  } catch (e) {
    await server.stop();
    throw e;
  }
}

/**
 * pg-boss, the PostgreSQL baseline: a database of its own on BENCH_POSTGRES_URL's server
 * (pg-boss installs its schema there), dropped after the run. pg-boss is a library, so it
 * runs in the load child (pgboss-load.ts): its CPU is the client's, and the database's
 * CPU is measured as for Redrive.
 */
export async function pgBossTarget(): Promise<Target> {
  const db = await createDatabase();
  return { url: db.url, queue: QUEUE, database: db.name, stop: db.drop };
}

/** RabbitMQ is someone else's process: nothing to start or stop, only a fresh queue name. */
export function rabbitTarget(url: string, run: number): Target {
  const pid = findRabbitPid();
  return {
    url,
    queue: `redrive-bench-${process.pid}-${run}`,
    pids: pid === undefined ? undefined : [pid],
    stop: async () => {},
  };
}

/** The broker's Erlang VM, if it runs on this machine and /proc shows it. */
function findRabbitPid(): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'beam.smp') return Number(entry);
    } catch {
      // The process ended while we looked.
    }
  }
  return undefined;
}

/** A TCP connect with a short timeout; RabbitMQ figures are "n/a" when this fails. */
export function reachable(amqpUrl: string, timeoutMs = 1000): Promise<boolean> {
  const { hostname, port } = new URL(amqpUrl);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port || 5672) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServerProcess } from './processes.js';

/** The systems under test: a fresh Redrive per run, the canned ceiling, RabbitMQ. */

export interface Target {
  /** Base URL (HTTP) or amqp:// URL. */
  url: string;
  /** Queue URL (HTTP) or queue name (AMQP). */
  queue: string;
  /** Process whose CPU is charged to the server, when known. */
  pid?: number;
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
  storage: 'sqlite' | 'memory';
  durability: 'process' | 'power';
}

/**
 * A new server on a new temporary data directory, so no run inherits another's data,
 * WAL or page cache. BENCH_SERVER_NODE_ARGS passes flags to the server's node, for
 * example `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile it under load.
 */
export async function startRedrive(opts: RedriveOptions): Promise<Target> {
  const dataDir = mkdtempSync(join(tmpdir(), 'redrive-bench-'));
  const removeDir = () => {
    rmSync(dataDir, { recursive: true, force: true });
    dataDirs.delete(removeDir);
  };
  dataDirs.add(removeDir);
  const nodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  try {
    const server = await startServerProcess([
      here('../src/cli/index.js'), 'serve', '--port', '0', '--host', '127.0.0.1',
      '--storage', opts.storage, '--data-dir', dataDir, '--durability', opts.durability,
      // info, because the "listening" line is an info line; nothing is logged per request.
      '--log-level', 'info',
    ], nodeArgs);
    const stop = async () => {
      await server.stop();
      removeDir();
    };
    try {
      return { url: server.url, queue: await createQueue(server.url), pid: server.pid, stop };
    } catch (e) {
      await stop();
      throw e;
    }
  } catch (e) {
    removeDir();
    throw e;
  }
}

async function createQueue(url: string): Promise<string> {
  const res = await fetch(`${url}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'AmazonSQS.CreateQueue' },
    body: JSON.stringify({ QueueName: QUEUE }),
  });
  const body = (await res.json()) as { QueueUrl?: string };
  if (!res.ok || !body.QueueUrl) throw new Error(`CreateQueue failed: ${res.status} ${JSON.stringify(body)}`);
  return body.QueueUrl;
}

export async function startCanned(): Promise<Target> {
  const server = await startServerProcess([here('./canned-server.js')]);
  return { url: server.url, queue: `${server.url}/${ACCOUNT}/${QUEUE}`, pid: server.pid, stop: server.stop };
}

/** RabbitMQ is someone else's process: nothing to start or stop, only a fresh queue name. */
export function rabbitTarget(url: string, run: number): Target {
  return { url, queue: `redrive-bench-${process.pid}-${run}`, pid: findRabbitPid(), stop: async () => {} };
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

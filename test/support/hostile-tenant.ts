/**
 * The hostile-tenant harness: a real server process with three accounts (an attacker, a
 * victim and a bystander), and a probe that keeps the bystander's SDK client busy while an
 * attack runs, measuring what the bystander experiences (success ratio, p99 latency) and
 * what the server's event loop went through (prom-client's monitorEventLoopDelay-based
 * `nodejs_eventloop_lag_p99_seconds`, reset by each scrape).
 *
 * Every attack test has the same shape: `const t = await startTenants(...)`, create the
 * bystander's queue, `const probe = t.probe()`, run the bounded attack as the attacker,
 * `const served = await probe.stop()`, then `assertServed(served)` and assertions about the
 * attacker's refusal.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent as HttpAgent } from 'node:http';
import { CreateQueueCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { startServerProcess, type ServerProcess, type ServerProcessOptions } from './server-process.js';

const METRICS_TOKEN = 'hostile-tenant-metrics-token';
/** The fewest calls a probe makes before it stops: its p99 needs that many to mean something. */
const MIN_CALLS = 20;

export type Tenant = 'attacker' | 'victim' | 'bystander';

export interface TenantKeys {
  accessKeyId: string;
  secretAccessKey: string;
  accountId: string;
}

/** The three accounts every hostile-tenant test signs in as. */
export const TENANTS: Record<Tenant, TenantKeys> = {
  attacker: { accessKeyId: 'AKIAATTACKER0000001', secretAccessKey: 'attacker-secret-0001', accountId: '111111111111' },
  victim: { accessKeyId: 'AKIAVICTIM00000002', secretAccessKey: 'victim-secret-0000002', accountId: '222222222222' },
  bystander: { accessKeyId: 'AKIABYSTANDER00003', secretAccessKey: 'bystander-secret-003', accountId: '333333333333' },
};

export interface TenantServer {
  server: ServerProcess;
  /** The AMQP port when the server was started with `amqp: true`. */
  amqpPort?: number;
  /** An SDK client signed as the tenant (its own keep-alive pool, one attempt per call). */
  client(tenant: Tenant): SQSClient;
  /** `amqp://key:secret@127.0.0.1:port` for the tenant (needs `amqp: true`). */
  amqpUrl(tenant: Tenant): string;
  /** The server process's resident memory, in bytes. */
  rss(): number;
  /** Starts the bystander's probe on its own queue (created here). */
  probe(opts?: ProbeOptions): Promise<Probe>;
  stop(): Promise<void>;
}

export interface TenantServerOptions extends Omit<ServerProcessOptions, 'credentials'> {
  /** Start the AMQP listener too (`--amqp-port 0`). */
  amqp?: boolean;
}

/** `redrive serve --credentials` with the three TENANTS, on a random loopback port. */
export async function startTenants(opts: TenantServerOptions = {}): Promise<TenantServer> {
  const credentials = Object.fromEntries(
    Object.values(TENANTS).map((k) => [k.accessKeyId, { secretAccessKey: k.secretAccessKey, accountId: k.accountId }]),
  );
  // /metrics needs a bearer token under --credentials: the probe reads the event-loop delay there.
  const tokenFile = join(mkdtempSync(join(tmpdir(), 'redrive-metrics-token-')), 'token');
  writeFileSync(tokenFile, METRICS_TOKEN);
  const args = ['--metrics-token-file', tokenFile, ...(opts.amqp ? ['--amqp-port', '0'] : []), ...(opts.args ?? [])];
  const server = await startServerProcess({ ...opts, args, credentials });
  const amqpPort = opts.amqp ? Number(/"amqpPort":(\d+)/.exec(server.output())?.[1]) : undefined;
  const clients: SQSClient[] = [];
  const client = (tenant: Tenant) => {
    const k = TENANTS[tenant];
    const c = new SQSClient({
      endpoint: server.url,
      region: 'us-east-1',
      credentials: { accessKeyId: k.accessKeyId, secretAccessKey: k.secretAccessKey },
      maxAttempts: 1,
      requestHandler: {
        httpAgent: new HttpAgent({ keepAlive: true, maxSockets: 8 }),
        requestTimeout: 60_000,
      },
    });
    clients.push(c);
    return c;
  };
  const t: TenantServer = {
    server,
    amqpPort,
    client,
    amqpUrl: (tenant) => {
      assert.ok(amqpPort, 'startTenants({ amqp: true }) for an AMQP URL');
      const k = TENANTS[tenant];
      return `amqp://${encodeURIComponent(k.accessKeyId)}:${encodeURIComponent(k.secretAccessKey)}@127.0.0.1:${amqpPort}`;
    },
    rss: () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${server.proc.pid}/status`, 'utf8'))![1]) * 1024,
    probe: (probeOpts) => startProbe(t, probeOpts),
    stop: async () => {
      clients.forEach((c) => c.destroy());
      await server.stop();
      server.cleanup();
    },
  };
  return t;
}

export interface ProbeOptions {
  /** The bystander's queue name; `bystander-probe` by default. */
  queue?: string;
  /** Pause between the bystander's calls, ms (default 20): a steady, modest load. */
  intervalMs?: number;
}

export interface Served {
  calls: number;
  failures: number;
  /** The first few failures' messages, for the assertion's text. */
  errors: string[];
  successRatio: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** The server's event-loop delay p99 over the probe, from its /metrics (ms). */
  eventLoopP99Ms: number | undefined;
}

export interface Probe {
  stop(): Promise<Served>;
}

/**
 * The bystander sends and receives on its own queue in a loop until stopped: each call's
 * latency is recorded, and a failure is any error (a 503, a timeout, a reset).
 */
async function startProbe(t: TenantServer, opts: ProbeOptions = {}): Promise<Probe> {
  const sqs = t.client('bystander');
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: opts.queue ?? 'bystander-probe' }));
  await eventLoopP99(t); // a scrape resets the histogram: what follows is the probe's
  const latencies: number[] = [];
  const errors: string[] = [];
  let failures = 0;
  let running = true;
  const loop = (async () => {
    for (let i = 0; running; i++) {
      const started = performance.now();
      try {
        if (i % 2 === 0) await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: `probe ${i}` }));
        else await sqs.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 1, WaitTimeSeconds: 0 }));
      } catch (e) {
        failures++;
        if (errors.length < 5) errors.push(String((e as Error).message ?? e));
      }
      latencies.push(performance.now() - started);
      await new Promise((r) => setTimeout(r, opts.intervalMs ?? 20));
    }
  })();
  return {
    stop: async () => {
      // An attack that ends quickly still leaves the bystander enough calls to judge by.
      while (latencies.length < MIN_CALLS && failures < MIN_CALLS) await new Promise((r) => setTimeout(r, 10));
      running = false;
      await loop;
      const sorted = [...latencies].sort((a, b) => a - b);
      const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
      return {
        calls: latencies.length,
        failures,
        errors,
        successRatio: latencies.length === 0 ? 0 : (latencies.length - failures) / latencies.length,
        p50Ms: at(0.5),
        p99Ms: at(0.99),
        maxMs: sorted.at(-1) ?? 0,
        eventLoopP99Ms: await eventLoopP99(t),
      };
    },
  };
}

/** The server's `nodejs_eventloop_lag_p99_seconds`, in ms (undefined if absent). */
async function eventLoopP99(t: TenantServer): Promise<number | undefined> {
  const res = await fetch(`${t.server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } }).catch(
    () => undefined,
  );
  if (!res?.ok) return undefined;
  const m = /^nodejs_eventloop_lag_p99_seconds(?:\{[^}]*\})? ([0-9.e+-]+)$/m.exec(await res.text());
  return m ? Number(m[1]) * 1000 : undefined;
}

/** The bar every attack must leave the bystander above: ≥ 99% success, p99 < 250 ms. */
export function assertServed(served: Served, what: string): void {
  const summary = `${what}: bystander ${served.calls} calls, ${served.failures} failed, p50 ${served.p50Ms.toFixed(1)} ms, p99 ${served.p99Ms.toFixed(1)} ms, max ${served.maxMs.toFixed(1)} ms, server event-loop p99 ${served.eventLoopP99Ms?.toFixed(1) ?? '?'} ms; ${served.errors.join(' | ')}`;
  assert.ok(served.calls >= MIN_CALLS, `the probe made too few calls to judge — ${summary}`);
  assert.ok(served.successRatio >= 0.99, `the bystander was refused — ${summary}`);
  assert.ok(served.p99Ms < 250, `the bystander waited — ${summary}`);
}

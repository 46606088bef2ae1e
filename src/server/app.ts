import { hostname } from 'node:os';
import { join } from 'node:path';
import pino, { type Logger } from 'pino';
import { ManualClock, SystemClock, type Clock } from '../engine/clock.js';
import { Engine } from '../engine/engine.js';
import { PostgresStore } from '../stores/postgres/store.js';
import { SqliteStore, type Durability } from '../stores/sqlite/store.js';
import type { Store } from '../engine/store/store.js';
import { loadCredentials } from './auth/caller.js';
import { loadConfigFile } from './config-file.js';
import { declareQueues } from './declare-queues.js';
import { admissionLimits } from './admission.js';
import { HttpServer } from './http-server.js';
import { Readiness } from './readiness.js';
import { ConsoleRoutes } from '../console/console-routes.js';
import { ServerMetrics } from '../metrics/metrics.js';
import { MetricsEndpoint, parseMetricsAddress, readMetricsToken } from '../metrics/metrics-endpoint.js';
import { AmqpServer } from '../protocols/amqp/server.js';

export interface ServerConfig {
  host: string;
  port: number;
  /** `sqlite` (default), `memory`, or a `postgres://user@host:port/db[?pool_size=N]` URL. */
  storage: string;
  /** Whether `storage` came from the command line, and so overrides the config file's. */
  storageFromFlag?: boolean;
  dataDir: string;
  durability: Durability;
  region: string;
  accountId: string;
  logLevel: string;
  clock: 'system' | 'manual';
  /** A JSON file of access keys: when given, every SQS request must be SigV4-signed by one of them. */
  credentials?: string;
  /** The config file with dead-letter policies (config-file.ts), reloaded by `reload()`. */
  configFile?: string;
  /** The web console under /console (docs/console.md): `on` (default) or `off`. */
  console: 'on' | 'off';
  /**
   * On SIGTERM, how long `/ready` answers 503 while the server still serves everything,
   * before it stops accepting connections and drains: time for a load balancer to notice.
   */
  shutdownGraceMs: number;
  /** This node's name in the `node` label of its metrics; host name and port by default. */
  nodeId?: string;
  /** `host:port`: serve /metrics there instead of on the main port (docs/monitoring.md). */
  metricsAddress?: string;
  /** A file holding the bearer token /metrics requires. */
  metricsTokenFile?: string;
  /** The AMQP 0-9-1 listener's port (docs/amqp.md); off when absent. */
  amqpPort?: number;
}

export const defaults: ServerConfig = {
  host: '127.0.0.1',
  port: 9324,
  storage: 'sqlite',
  dataDir: './data',
  durability: 'process',
  region: 'us-east-1',
  accountId: '000000000000',
  logLevel: 'info',
  clock: 'system',
  console: 'on',
  shutdownGraceMs: 0,
};

export async function openStore(config: ServerConfig, log?: Logger): Promise<Store> {
  if (config.storage === 'memory') return new SqliteStore({ path: ':memory:' });
  if (config.storage === 'sqlite') {
    return new SqliteStore({ path: join(config.dataDir, 'redrive.db'), durability: config.durability });
  }
  if (/^postgres(ql)?:\/\//.test(config.storage)) {
    return PostgresStore.open({ url: config.storage, log: (msg, err) => log?.warn({ err }, msg) });
  }
  throw new Error(`unknown storage "${config.storage}": use sqlite, memory or a postgres:// URL`);
}

export interface RunningServer {
  url: string;
  engine: Engine;
  log: Logger;
  /** Re-reads the config file: applies its policies to every queue at once, declares its queues. */
  reload(): Promise<void>;
  stop(): Promise<void>;
}

/** Opens the store, starts the engine and the HTTP front; `stop` undoes it in order. */
export async function startServer(config: ServerConfig): Promise<RunningServer> {
  const log = pino({ level: config.logLevel, base: undefined });
  const clock: Clock = config.clock === 'manual' ? new ManualClock() : new SystemClock();
  const file = config.configFile ? await loadConfigFile(config.configFile) : undefined;
  const policies = file?.policies ?? [];
  // The config file names the storage unless --storage did.
  const storage = config.storageFromFlag || !file?.storage ? config.storage : file.storage;
  // Bad metrics flags fail here, before anything is opened.
  const metricsAccess = {
    token: config.metricsTokenFile ? readMetricsToken(config.metricsTokenFile) : undefined,
    address: config.metricsAddress ? parseMetricsAddress(config.metricsAddress) : undefined,
    credentials: config.credentials !== undefined,
  };
  const store = await openStore({ ...config, storage }, log);
  // With --port 0 the port is not known yet: the process id tells nodes on one host apart.
  const node = config.nodeId ?? `${hostname()}:${config.port || `pid${process.pid}`}`;
  const metrics = new ServerMetrics({ store, region: config.region, node });
  const engine = new Engine({
    store, clock, region: config.region, log, policies, maxLongPolls: admissionLimits().maxLongPolls, observer: metrics.observer,
  });
  metrics.attach(engine, node);
  if (file) {
    await declareQueues(engine, file.queues, config.accountId).catch(async (e) => {
      await store.close();
      throw e;
    });
  }
  engine.start();
  const credentials = config.credentials ? loadCredentials(config.credentials) : undefined;
  const readiness = new Readiness(store);
  const metricsEndpoint = new MetricsEndpoint(metrics, metricsAccess);
  const http = new HttpServer(engine, {
    readiness,
    host: config.host, port: config.port, accountId: config.accountId, region: config.region, log,
    manualClock: clock instanceof ManualClock ? clock : undefined,
    credentials,
    console: config.console === 'off' ? undefined : new ConsoleRoutes({ engine, region: config.region, accountId: config.accountId, credentials }),
    metrics: metricsEndpoint,
  });
  const amqp = config.amqpPort === undefined ? undefined
    : new AmqpServer({ engine, host: config.host, port: config.amqpPort, accountId: config.accountId, credentials, log });
  await amqp?.listen();
  const url = await http.listen();
  const metricsListener = metricsAccess.address ? await metricsEndpoint.listen() : undefined;
  log.info({ url, storage: store.kind, durability: config.durability, node, metrics: metricsListener?.url ?? `${url}/metrics` }, 'listening');
  if (config.console !== 'off') {
    log.info(credentials ? `console at ${url}/console (sign in with an access key)` : `console open without sign-in at ${url}/console`);
  }
  let stopping: Promise<void> | undefined;
  return {
    url, engine, log,
    reload: async () => {
      if (!config.configFile) return;
      const next = await loadConfigFile(config.configFile);
      engine.policies.replace(next.policies);
      await declareQueues(engine, next.queues, config.accountId);
      log.info({ policies: next.policies.map((p) => p.name), queues: next.queues.length }, 'policies reloaded');
    },
    stop: () =>
      (stopping ??= (async () => {
        readiness.shuttingDown();
        log.info({ graceMs: config.shutdownGraceMs }, 'shutting down');
        // The load balancer sees /ready fail and stops sending; until then, serve on.
        if (config.shutdownGraceMs > 0) await new Promise((r) => setTimeout(r, config.shutdownGraceMs));
        await amqp?.close();
        const closing = http.close();
        await metricsListener?.close();
        await engine.close();
        await closing;
        await store.close();
        log.info('stopped');
      })()),
  };
}

import { hostname } from 'node:os';
import { amqpPropertyCodec } from '../protocols/amqp/property-json.js';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { RuntimePolicies } from '../engine/amqp/policies.js';
import { ManualClock, SystemClock, type Clock } from '../engine/clock.js';
import { Engine } from '../engine/engine.js';
import { PostgresStore } from '../stores/postgres/store.js';
import { SqliteStore } from '../stores/sqlite/store.js';
import type { Store } from '../engine/store/store.js';
import { ConfigError, loadConfigFile, parseConfig } from './config-file.js';
import { declareQueues } from './declare-queues.js';
import { admissionLimits } from './admission.js';
import { HttpServer } from './http-server.js';
import { Readiness } from './readiness.js';
import { ConsoleRoutes } from '../console/console-routes.js';
import { ServerMetrics } from '../metrics/metrics.js';
import { MetricsEndpoint, parseMetricsAddress, readMetricsToken, type MetricsAccess } from '../metrics/metrics-endpoint.js';
import { AmqpServer } from '../protocols/amqp/server.js';
import { AuthThrottle } from '../protocols/auth-throttle.js';
import { ManagementApi } from './management-api.js';
import { BrokerApi } from './management/broker-api.js';
import { RequestTally } from './management/request-tally.js';
import { defaults, serverLog, type ServerConfig } from './server-config.js';
import { parseAllowedHosts } from './request-guard.js';
import { checkAccountId, checkDataDir, checkPortFree, checkRegion, listenError, readCredentials, StartupError } from './start-up.js';

/** Where the storage setting points: checked before anything is opened or created. */
function storageKind(storage: string, from = '--storage'): 'memory' | 'sqlite' | 'postgres' {
  if (storage === 'memory' || storage === 'sqlite') return storage;
  if (/^postgres(ql)?:\/\//.test(storage)) return 'postgres';
  throw new StartupError(`${from} ${JSON.stringify(storage)}: unknown storage: give sqlite, memory or a postgres:// URL`);
}

export async function openStore(config: ServerConfig, log?: Logger): Promise<Store> {
  const kind = storageKind(config.storage);
  if (kind === 'memory') return new SqliteStore({ path: ':memory:' });
  if (kind === 'sqlite') {
    try {
      return new SqliteStore({ path: join(config.dataDir, 'redrive.db'), durability: config.durability, defaultRegion: config.region });
    } catch (e) {
      // The store's message names the file (or the directory) and what to do.
      throw new StartupError(`--data-dir ${config.dataDir}: ${(e as Error).message}`);
    }
  }
  try {
    return await PostgresStore.open({ url: config.storage, defaultRegion: config.region, log: (msg, err) => log?.warn({ err }, msg) });
  } catch (e) {
    const url = new URL(config.storage);
    if (url.password) url.password = '***';
    throw new StartupError(`--storage ${url.href}: cannot open the PostgreSQL database (${(e as Error).message}): check that it is up and the URL is right`);
  }
}

/**
 * Every check of the start-up input that needs nothing opened or created, in one place:
 * flags, the config file, the storage, the credentials file, the metrics flags and the
 * ports. Returns the config file's content, the credentials and who may scrape /metrics.
 */
async function checkStartup(config: ServerConfig) {
  checkRegion(config.region);
  checkAccountId(config.accountId);
  const file = config.configFile ? await loadConfigFile(config.configFile)
    : config.configValue !== undefined ? parseConfig(config.configValue, 'config') : undefined;
  // The config file names the storage unless --storage did.
  const storage = config.storageFromFlag || !file?.storage ? config.storage : file.storage;
  const from = storage === config.storage ? '--storage' : `${config.configFile ?? 'config'}: storage`;
  if (storageKind(storage, from) === 'sqlite') checkDataDir(config.dataDir);
  const credentials = config.credentials ? readCredentials(config.credentials) : undefined;
  const allowedHosts = startupCheck(() => parseAllowedHosts(config.allowedHosts));
  const metricsAccess = startupCheck(() => ({
    token: config.metricsTokenFile ? readMetricsToken(config.metricsTokenFile) : undefined,
    address: config.metricsAddress ? parseMetricsAddress(config.metricsAddress) : undefined,
    credentials: config.credentials !== undefined,
  }));
  await checkPortFree(config.host, config.port);
  if (config.amqpPort !== undefined) await checkPortFree(config.host, config.amqpPort, '--amqp-port');
  return { file, storage, credentials, metricsAccess, allowedHosts };
}

/** Runs a check of start-up input, reporting its failure as the one line a user can act on. */
function startupCheck<T>(check: () => T): T {
  try {
    return check();
  } catch (e) {
    throw e instanceof StartupError ? e : new StartupError((e as Error).message);
  }
}

/** How long a stopping server lets requests in flight finish (waiting long polls are answered at once). */
export const DRAIN_MS = 2_500;

export interface RunningServer {
  url: string;
  /** The AMQP listener's port (the one picked for `--amqp-port 0`), when it is on. */
  amqpPort?: number;
  engine: Engine;
  log: Logger;
  /** Re-reads the config file: applies its policies to every queue at once, declares its queues. */
  reload(): Promise<void>;
  stop(): Promise<void>;
}

/** Opens the store, starts the engine and the HTTP front; `stop` undoes it in order. */
export async function startServer(config: ServerConfig, log = serverLog(config.logLevel)): Promise<RunningServer> {
  const clock: Clock = config.clock === 'manual' ? new ManualClock() : new SystemClock();
  const { file, storage, credentials, metricsAccess, allowedHosts } = await checkStartup(config);
  const policies = file?.policies ?? [];
  const store = await openStore({ ...config, storage }, log);
  // With --port 0 the port is not known yet: the process id tells nodes on one host apart.
  const node = config.nodeId ?? `${hostname()}:${config.port || `pid${process.pid}`}`;
  const metrics = new ServerMetrics({ store, node });
  const engine = new Engine({
    store, clock, region: config.region, log, policies, maxLongPolls: admissionLimits().maxLongPolls, observer: metrics.observer,
    amqpCodec: amqpPropertyCodec,
  });
  metrics.attach(engine, node);
  const runtimePolicies = new RuntimePolicies(store.policies, engine.policies, policies, log);
  await runtimePolicies.start().catch(async (e) => {
    await store.close();
    throw e;
  });
  if (file) {
    await declareQueues(engine, file.queues, config.accountId).catch(async (e) => {
      await store.close();
      throw new ConfigError(`${config.configFile ?? 'config'}: ${(e as Error).message}`);
    });
  }
  // Before the AMQP listener opens: deliveries a stopped process held are ready again first.
  await engine.deliveryHolders.start().catch(async (e) => {
    await store.close();
    throw e;
  });
  engine.start();
  const readiness = new Readiness(store);
  const metricsEndpoint = new MetricsEndpoint(metrics, metricsAccess);
  // One throttle for every interface that checks the same secrets (auth-throttle.ts), on
  // the engine's clock so that tests on a manual clock can move it.
  const authThrottle = new AuthThrottle({}, () => clock.now());
  // The AMQP listener is made below; the broker views read it once it exists.
  const requestTally = new RequestTally();
  const broker = new BrokerApi({ engine, node, amqp: () => amqp, tally: requestTally, log });
  const http = new HttpServer(engine, {
    readiness, authThrottle, trustProxy: config.trustProxy,
    host: config.host, port: config.port, accountId: config.accountId, region: config.region, log,
    manualClock: clock instanceof ManualClock ? clock : undefined,
    credentials, allowedHosts, bodyBudget: config.maxBodyMemoryMiB === undefined ? undefined : config.maxBodyMemoryMiB * 1024 * 1024,
    console: config.console === 'off' ? undefined : new ConsoleRoutes({ engine, region: config.region, accountId: config.accountId, credentials, throttle: authThrottle, broker }),
    metrics: metricsEndpoint,
    management: new ManagementApi(runtimePolicies, { accountId: config.accountId, credentials, throttle: authThrottle, broker }),
    requestTally,
  });
  const amqp = config.amqpPort === undefined ? undefined
    : new AmqpServer({ engine, host: config.host, port: config.amqpPort, accountId: config.accountId, credentials, log, limits: config.amqpLimits });
  let amqpPort: number | undefined;
  const url = await (async () => {
    amqpPort = await amqp?.listen().catch((e) => { throw listenError(e, config.host, config.amqpPort!, '--amqp-port') ?? e; });
    return http.listen().catch((e) => { throw listenError(e, config.host, config.port) ?? e; });
  })().catch(async (e) => {
    await amqp?.close();
    await engine.close();
    await store.close();
    throw e;
  });
  const metricsListener = metricsAccess.address ? await metricsEndpoint.listen() : undefined;
  log.info({
    url, storage: store.kind,
    // --durability is the SQLite file's setting; memory and PostgreSQL have their own.
    ...(store.kind === 'sqlite' ? { durability: config.durability } : {}),
    node, metrics: metricsListener?.url ?? metricsOnMainPort(url, metricsAccess),
  }, 'listening');
  if (config.console !== 'off') {
    log.info(credentials ? `console at ${url}/console (sign in with an access key)` : `console open without sign-in at ${url}/console`);
  }
  let stopping: Promise<void> | undefined;
  return {
    url, amqpPort, engine, log,
    reload: async () => {
      if (!config.configFile) return;
      const next = await loadConfigFile(config.configFile);
      runtimePolicies.setConfig(next.policies);
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
        runtimePolicies.stop();
        const closing = http.close();
        await metricsListener?.close();
        await engine.close();
        // Requests still running after the drain are cut; their writes are committed
        // or not, as with a crash, and the store closes cleanly either way.
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([closing, new Promise((r) => (timer = setTimeout(r, DRAIN_MS)))]);
        clearTimeout(timer);
        http.server.closeAllConnections();
        await store.close();
        log.info('stopped');
      })()),
  };
}

/** Where /metrics answers a scrape, or why it does not (metrics-endpoint.ts refuses it then). */
function metricsOnMainPort(url: string, access: MetricsAccess): string {
  if (access.credentials && !access.token) return 'closed: --credentials is on; open it with --metrics-token-file or --metrics-address';
  return access.token ? `${url}/metrics (bearer token of --metrics-token-file)` : `${url}/metrics`;
}

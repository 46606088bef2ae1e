import { hostname } from 'node:os';
import { amqpPropertyCodec } from '../protocols/amqp/property-json.js';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { RuntimePolicies } from '../engine/amqp/policies.js';
import { ManualClock, SystemClock, type Clock } from '../engine/kernel/clock.js';
import { Engine } from '../engine/engine.js';
import { PostgresStore } from '../stores/postgres/store.js';
import { SqliteStore } from '../stores/sqlite/store.js';
import type { Store } from '../engine/store/store.js';
import { ConfigError, loadConfigFile, parseConfig, type ConfigFile } from './config-file.js';
import { declareQueues } from './declare-queues.js';
import { admissionLimits } from './admission.js';
import { HttpServer } from './http-server.js';
import { HttpThreads } from './threads/http-threads.js';
import { mountTable } from './mount-table.js';
import { Resources } from './resources.js';
import { engineBackend, SqsApp } from './sqs-app.js';
import type { Credentials } from '../auth/credentials.js';
import { Readiness } from './readiness.js';
import { ConsoleRoutes } from '../console/console-routes.js';
import { ServerMetrics } from '../metrics/metrics.js';
import {
  MetricsEndpoint,
  parseMetricsAddress,
  readMetricsToken,
  type MetricsAccess,
} from '../metrics/metrics-endpoint.js';
import { AmqpServer } from '../protocols/amqp/server.js';
import { AuthThrottle } from '../auth/throttle.js';
import { ManagementApi } from './management-api.js';
import { BrokerApi } from './management/broker-api.js';
import { RequestTally } from './management/request-tally.js';
import { serverLog, type ServerConfig } from './server-config.js';
import { parseAllowedHosts, RequestGuard } from './request-guard.js';
import {
  checkAccountId,
  checkDataDir,
  checkPortFree,
  checkRegion,
  checkThreads,
  listenError,
  readCredentials,
  StartupError,
} from './start-up.js';

/** Where the storage setting points: checked before anything is opened or created. */
function storageKind(storage: string, from = '--storage'): 'memory' | 'sqlite' | 'postgres' {
  if (storage === 'memory' || storage === 'sqlite') return storage;
  if (/^postgres(ql)?:\/\//.test(storage)) return 'postgres';
  throw new StartupError(
    `${from} ${JSON.stringify(storage)}: unknown storage: give sqlite, memory or a postgres:// URL`,
  );
}

export async function openStore(config: ServerConfig, log?: Logger): Promise<Store> {
  const kind = storageKind(config.storage);
  if (kind === 'memory') return new SqliteStore({ path: ':memory:' });
  if (kind === 'sqlite') {
    try {
      return new SqliteStore({
        path: join(config.dataDir, 'redrive.db'),
        durability: config.durability,
        defaultRegion: config.region,
      });
    } catch (e) {
      // The store's message names the file (or the directory) and what to do.
      throw new StartupError(`--data-dir ${config.dataDir}: ${(e as Error).message}`, { cause: e });
    }
  }
  try {
    return await PostgresStore.open({
      url: config.storage,
      defaultRegion: config.region,
      log: (msg, err) => log?.warn({ err }, msg),
    });
  } catch (e) {
    const url = new URL(config.storage);
    if (url.password) url.password = '***';
    throw new StartupError(
      `--storage ${url.href}: cannot open the PostgreSQL database (${(e as Error).message}): check that it is up and the URL is right`,
      { cause: e },
    );
  }
}

/**
 * Every check of the start-up input that needs nothing opened or created, in one place:
 * flags, the config file, the storage, the credentials file, the metrics flags and the
 * ports. Returns the config file's content, the credentials and who may scrape /metrics.
 */
async function checkStartup(config: ServerConfig): Promise<Checked> {
  checkRegion(config.region);
  checkAccountId(config.accountId);
  checkThreads(config.threads ?? 1);
  const file = config.configFile
    ? await loadConfigFile(config.configFile)
    : config.configValue !== undefined
      ? parseConfig(config.configValue, 'config')
      : undefined;
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

interface Checked {
  file?: ConfigFile;
  /** The storage setting in force: --storage, else the config file's. */
  storage: string;
  credentials?: Credentials;
  metricsAccess: MetricsAccess;
  allowedHosts: string[];
}

/** Runs a check of start-up input, reporting its failure as the one line a user can act on. */
function startupCheck<T>(check: () => T): T {
  try {
    return check();
  } catch (e) {
    throw e instanceof StartupError ? e : new StartupError((e as Error).message, { cause: e });
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

/**
 * Opens the store, starts the engine and the listeners; `stop` closes them in reverse
 * order. When a step fails, what the steps before it opened is closed the same way.
 */
export async function startServer(config: ServerConfig, log = serverLog(config.logLevel)): Promise<RunningServer> {
  const checked = await checkStartup(config);
  const resources = new Resources();
  try {
    return await start(config, checked, resources, log);
  } catch (e) {
    // The caller sees why start-up failed; a failure to close is logged beside it.
    await resources.closeAll().catch((err: unknown) => log.error({ err }, 'could not close what start-up had opened'));
    throw e;
  }
}

async function start(
  config: ServerConfig,
  checked: Checked,
  resources: Resources,
  log: Logger,
): Promise<RunningServer> {
  const { file, storage, credentials, metricsAccess, allowedHosts } = checked;
  const clock: Clock = config.clock === 'manual' ? new ManualClock() : new SystemClock();
  const policies = file?.policies ?? [];
  const store = await openStore({ ...config, storage }, log);
  resources.defer(() => store.close());
  // With --port 0 the port is not known yet: the process id tells nodes on one host apart.
  const node = config.nodeId ?? `${hostname()}:${config.port || `pid${process.pid}`}`;
  const metrics = new ServerMetrics({ store, node });
  const engine = new Engine({
    store,
    clock,
    region: config.region,
    log,
    policies,
    maxLongPolls: admissionLimits().maxLongPolls,
    quotas: config.quotas,
    observer: metrics.observer,
    amqpCodec: amqpPropertyCodec,
    bindingLimits: {
      ...(config.amqpLimits?.maxBindingsPerAccount && { perAccount: config.amqpLimits.maxBindingsPerAccount }),
      ...(config.amqpLimits?.maxBindingsPerExchange && { perExchange: config.amqpLimits.maxBindingsPerExchange }),
    },
  });
  metrics.attach(engine, node);
  const runtimePolicies = new RuntimePolicies(store.policies, engine.policies, policies, log, engine.quotas.policies);
  await runtimePolicies.start();
  resources.defer(() => runtimePolicies.stop());
  if (file) {
    await declareQueues(engine, file.queues, config.accountId).catch((e: unknown) => {
      throw new ConfigError(`${config.configFile ?? 'config'}: ${(e as Error).message}`, { cause: e });
    });
  }
  // Before the AMQP listener opens: deliveries a stopped process held are ready again first.
  await engine.deliveryHolders.start();
  engine.start();
  resources.defer(() => engine.close());
  const readiness = new Readiness(store);
  // One throttle for every interface that checks the same secrets (src/auth/throttle.ts), on
  // the engine's clock so that tests on a manual clock can move it.
  const authThrottle = new AuthThrottle({}, () => clock.now());
  const metricsEndpoint = new MetricsEndpoint(metrics, { ...metricsAccess, throttle: authThrottle });
  // The AMQP listener is made below; the broker views read it once it exists.
  let amqp: AmqpServer | undefined;
  const requestTally = new RequestTally();
  const broker = new BrokerApi({ engine, node, amqp: () => amqp, tally: requestTally, log });
  const guard = { credentials: credentials !== undefined, allowedHosts };
  const bodyBudget = config.maxBodyMemoryMiB === undefined ? undefined : config.maxBodyMemoryMiB * 1024 * 1024;
  const mounts = mountTable({
    sqs: new SqsApp(engineBackend(engine), {
      accountId: config.accountId,
      region: config.region,
      host: config.host,
      port: config.port,
      credentials,
      authThrottle,
      manualClock: clock instanceof ManualClock ? clock : undefined,
      requestTally,
    }),
    readiness,
    console:
      config.console === 'off'
        ? undefined
        : new ConsoleRoutes({
            engine,
            region: config.region,
            accountId: config.accountId,
            credentials,
            throttle: authThrottle,
            broker,
            sessionsPerAccount: config.sessionsPerAccount,
          }),
    metrics: metricsEndpoint,
    management: new ManagementApi(runtimePolicies, {
      accountId: config.accountId,
      credentials,
      throttle: authThrottle,
      broker,
    }),
  });
  const http =
    (config.threads ?? 1) > 1
      ? new HttpThreads({
          threads: config.threads!,
          host: config.host,
          port: config.port,
          log,
          engine,
          mounts,
          readiness,
          throttle: authThrottle,
          credentials,
          tally: requestTally,
          thread: {
            logLevel: config.logLevel,
            guard,
            trustProxy: config.trustProxy,
            clientLimits: config.clientLimits,
            bodyBudget,
            accountId: config.accountId,
            region: config.region,
            signed: credentials !== undefined,
            console: config.console !== 'off',
            manualClock: clock instanceof ManualClock,
            closeIntrinsics: !Object.isExtensible(Object.prototype),
          },
        })
      : new HttpServer({
          host: config.host,
          port: config.port,
          log,
          trustProxy: config.trustProxy,
          clientLimits: config.clientLimits,
          guard,
          bodyBudget,
          mounts,
        });

  let amqpPort: number | undefined;
  if (config.amqpPort !== undefined) {
    const listener = new AmqpServer({
      engine,
      host: config.host,
      port: config.amqpPort,
      accountId: config.accountId,
      credentials,
      log,
      limits: config.amqpLimits,
      throttle: authThrottle,
    });
    amqp = listener;
    metrics.attachAmqp(() => listener.counts(), node);
    // Its listen starts the expiry of deliveries before it binds: close undoes both.
    resources.defer(() => listener.close());
    amqpPort = await listener.listen().catch((e) => {
      throw listenError(e, config.host, config.amqpPort!, '--amqp-port') ?? e;
    });
  }
  const url = await http.listen().catch((e) => {
    throw listenError(e, config.host, config.port) ?? e;
  });
  // Waiting long polls are answered at once; requests still running after the drain are
  // cut, their writes committed or not as with a crash, before the engine and the store close.
  resources.defer(() => http.close(DRAIN_MS));
  // The separate metrics address always has open mode's Host and cross-site checks: it
  // shows every account's queue names, and a scrape carries no signature to rely on.
  const metricsGuard = new RequestGuard({ ...guard, credentials: false });
  const metricsListener = metricsAccess.address
    ? await metricsEndpoint.listen((headers) => metricsGuard.check('api', headers)?.message)
    : undefined;
  if (metricsListener) resources.defer(() => metricsListener.close());
  log.info(
    {
      url,
      storage: store.kind,
      // --durability is the SQLite file's setting; memory and PostgreSQL have their own.
      ...(store.kind === 'sqlite' ? { durability: config.durability } : {}),
      node,
      ...((config.threads ?? 1) > 1 ? { threads: config.threads } : {}),
      metrics: metricsListener?.url ?? metricsOnMainPort(url, metricsAccess),
    },
    'listening',
  );
  if (config.console !== 'off') {
    log.info(
      credentials
        ? `console at ${url}/console (sign in with an access key)`
        : `console open without sign-in at ${url}/console`,
    );
  }
  // In the background: a start that fails to read them has failed already, above.
  engine.warmQueues().catch((err: Error) => log.debug({ err: err.message }, 'queues not read ahead'));
  let stopping: Promise<void> | undefined;
  return {
    url,
    amqpPort,
    engine,
    log,
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
        await resources.closeAll();
        log.info('stopped');
      })()),
  };
}

/** Where /metrics answers a scrape, or why it does not (metrics-endpoint.ts refuses it then). */
function metricsOnMainPort(url: string, access: MetricsAccess): string {
  if (access.credentials && !access.token)
    return 'closed: --credentials is on; open it with --metrics-token-file or --metrics-address';
  return access.token ? `${url}/metrics (bearer token of --metrics-token-file)` : `${url}/metrics`;
}

import { join } from 'node:path';
import pino, { type Logger } from 'pino';
import { ManualClock, SystemClock, type Clock } from '../engine/clock.js';
import { Engine } from '../engine/engine.js';
import { PostgresStore } from '../stores/postgres/store.js';
import { SqliteStore, type Durability } from '../stores/sqlite/store.js';
import type { Store } from '../engine/store/store.js';
import { ConfigError, loadConfigFile } from './config-file.js';
import { declareQueues } from './declare-queues.js';
import { admissionLimits } from './admission.js';
import { HttpServer } from './http-server.js';
import { ConsoleRoutes } from '../console/console-routes.js';
import { checkAccountId, checkDataDir, checkPortFree, checkRegion, listenError, readCredentials, StartupError } from './start-up.js';

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
};

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
      return new SqliteStore({ path: join(config.dataDir, 'redrive.db'), durability: config.durability });
    } catch (e) {
      // The store's message names the file (or the directory) and what to do.
      throw new StartupError(`--data-dir ${config.dataDir}: ${(e as Error).message}`);
    }
  }
  try {
    return await PostgresStore.open({ url: config.storage, log: (msg, err) => log?.warn({ err }, msg) });
  } catch (e) {
    const url = new URL(config.storage);
    if (url.password) url.password = '***';
    throw new StartupError(`--storage ${url.href}: cannot open the PostgreSQL database (${(e as Error).message}): check that it is up and the URL is right`);
  }
}

/** The server's JSON log lines (pino); start-up failures go the same way (see the CLI). */
export function serverLog(level: string): Logger {
  return pino({ level, base: undefined });
}

/**
 * Every check of the start-up input that needs nothing opened or created, in one place:
 * flags, the config file, the storage, the credentials file and the port. Returns the
 * config file's content and the credentials.
 */
async function checkStartup(config: ServerConfig) {
  checkRegion(config.region);
  checkAccountId(config.accountId);
  const file = config.configFile ? await loadConfigFile(config.configFile) : undefined;
  // The config file names the storage unless --storage did.
  const storage = config.storageFromFlag || !file?.storage ? config.storage : file.storage;
  const from = storage === config.storage ? '--storage' : `${config.configFile}: storage`;
  if (storageKind(storage, from) === 'sqlite') checkDataDir(config.dataDir);
  const credentials = config.credentials ? readCredentials(config.credentials) : undefined;
  await checkPortFree(config.host, config.port);
  return { file, storage, credentials };
}

/** How long a stopping server lets requests in flight finish (waiting long polls are answered at once). */
export const DRAIN_MS = 2_500;

export interface RunningServer {
  url: string;
  engine: Engine;
  log: Logger;
  /** Re-reads the config file: applies its policies to every queue at once, declares its queues. */
  reload(): Promise<void>;
  stop(): Promise<void>;
}

/** Opens the store, starts the engine and the HTTP front; `stop` undoes it in order. */
export async function startServer(config: ServerConfig, log = serverLog(config.logLevel)): Promise<RunningServer> {
  const clock: Clock = config.clock === 'manual' ? new ManualClock() : new SystemClock();
  const { file, storage, credentials } = await checkStartup(config);
  const policies = file?.policies ?? [];
  const store = await openStore({ ...config, storage }, log);
  const engine = new Engine({ store, clock, region: config.region, log, policies, maxLongPolls: admissionLimits().maxLongPolls });
  if (file) {
    await declareQueues(engine, file.queues, config.accountId).catch(async (e) => {
      await store.close();
      throw new ConfigError(`${config.configFile}: ${(e as Error).message}`);
    });
  }
  engine.start();
  const http = new HttpServer(engine, {
    host: config.host, port: config.port, accountId: config.accountId, region: config.region, log,
    manualClock: clock instanceof ManualClock ? clock : undefined,
    credentials,
    console: config.console === 'off' ? undefined : new ConsoleRoutes({ engine, region: config.region, accountId: config.accountId, credentials }),
  });
  const url = await http.listen().catch(async (e) => {
    await engine.close();
    await store.close();
    throw listenError(e, config.host, config.port) ?? e;
  });
  log.info({ url, storage: store.kind, durability: config.durability }, 'listening');
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
        log.info('shutting down');
        const closing = http.close();
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

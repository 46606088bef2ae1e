import { join } from 'node:path';
import pino, { type Logger } from 'pino';
import { ManualClock, SystemClock, type Clock } from '../engine/clock.js';
import { Engine } from '../engine/engine.js';
import { SqliteStore, type Durability } from '../stores/sqlite/sqlite-store.js';
import type { Store } from '../stores/store.js';
import { HttpFront } from './http-server.js';

export interface ServerConfig {
  host: string;
  port: number;
  /** `sqlite` (default), `memory`, or later a `postgres://` URL. */
  storage: string;
  dataDir: string;
  durability: Durability;
  region: string;
  accountId: string;
  logLevel: string;
  clock: 'system' | 'manual';
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
};

export function openStore(config: ServerConfig): Store {
  if (config.storage === 'memory') return new SqliteStore({ path: ':memory:' });
  if (config.storage === 'sqlite') {
    return new SqliteStore({ path: join(config.dataDir, 'redrive.db'), durability: config.durability });
  }
  throw new Error(`unknown storage "${config.storage}": use sqlite or memory`);
}

export interface RunningServer {
  url: string;
  engine: Engine;
  log: Logger;
  stop(): Promise<void>;
}

/** Opens the store, starts the engine and the HTTP front; `stop` undoes it in order. */
export async function startServer(config: ServerConfig): Promise<RunningServer> {
  const log = pino({ level: config.logLevel, base: undefined });
  const clock: Clock = config.clock === 'manual' ? new ManualClock() : new SystemClock();
  const store = openStore(config);
  const engine = new Engine({ store, clock, region: config.region, log });
  engine.start();
  const front = new HttpFront(engine, {
    host: config.host, port: config.port, accountId: config.accountId, region: config.region, log,
    manualClock: clock instanceof ManualClock ? clock : undefined,
  });
  const url = await front.listen();
  log.info({ url, storage: store.kind, durability: config.durability }, 'listening');
  let stopping: Promise<void> | undefined;
  return {
    url, engine, log,
    stop: () =>
      (stopping ??= (async () => {
        log.info('shutting down');
        const closing = front.close();
        await engine.close();
        await closing;
        await store.close();
        log.info('stopped');
      })()),
  };
}

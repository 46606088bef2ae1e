import pino, { type Logger } from 'pino';
import { DEFAULT_REGION } from '../engine/kernel/addressing.js';
import type { Durability } from '../stores/sqlite/store.js';
import type { AmqpLimits } from '../protocols/amqp/limits.js';
import type { AccountQuotas } from '../engine/queues/quotas.js';
import type { ClientLimits } from './admission.js';

// The server's settings and their defaults, apart from app.ts so that the CLI can build
// `redrive serve`'s flags (and its client commands can start) without loading the server.

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
  /** The config file's content given as a value (the library's `config` option); not with `configFile`. */
  configValue?: unknown;
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
  /**
   * Reverse proxies (addresses or CIDR ranges) whose X-Forwarded-For names the client, for
   * the throttle of failed authentication (client-address.ts); none by default.
   */
  trustProxy?: string[];
  /** `--allowed-hosts`: comma-separated host names the HTTP port answers to (request-guard.ts). */
  allowedHosts?: string;
  /** `--max-body-memory`: request bodies held in memory at once, in MiB (admission.ts). */
  maxBodyMemoryMiB?: number;
  /** The AMQP listener's limits (docs/security.md); defaults for those not given. */
  amqpLimits?: Partial<AmqpLimits>;
  /** What one client address may hold at the HTTP door (admission.ts); defaults for those not given. */
  clientLimits?: ClientLimits;
  /** What one account may hold (src/engine/quotas.ts); defaults for those not given. */
  quotas?: Partial<AccountQuotas>;
  /** Console sessions one account may hold (src/auth/console-sessions.ts). */
  sessionsPerAccount?: number;
  /**
   * `--threads`: HTTP threads in front of the one thread that owns the engine and the
   * store (docs/scaling.md); 1, the default, serves everything on one thread.
   */
  threads?: number;
}

export const defaults: ServerConfig = {
  host: '127.0.0.1',
  port: 9324,
  storage: 'sqlite',
  dataDir: './data',
  durability: 'process',
  region: DEFAULT_REGION,
  accountId: '000000000000',
  logLevel: 'info',
  clock: 'system',
  console: 'on',
  shutdownGraceMs: 0,
  maxBodyMemoryMiB: 512,
  threads: 1,
};

/**
 * The server's JSON log lines (pino); start-up failures go the same way (see the CLI).
 * They go through process.stdout, not pino's own fd writer: that one flushes at exit in
 * a loop that retries a write failing with EPIPE forever, so a server whose stdout reader
 * had gone never exited on SIGTERM. A log line that cannot be written is dropped.
 */
export function serverLog(level: string): Logger {
  if (!stdoutGuarded) {
    stdoutGuarded = true;
    process.stdout.on('error', () => {});
  }
  return pino({ level, base: undefined }, process.stdout);
}

let stdoutGuarded = false;

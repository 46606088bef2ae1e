import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServerPolicyDefinition } from '../engine/policies/server-policies.js';
import { startServer } from '../server/app.js';
import { readCredentials } from '../server/start-up.js';
import { defaults, type ServerConfig } from '../server/server-config.js';

/**
 * Redrive as a library, for a project's own tests: `startRedrive()` runs the same server
 * as `redrive serve` (src/server/app.ts) inside the calling process, on a free loopback
 * port, with nothing kept by default. The types in this file are the package's public
 * API (docs/library.md), under semver; nothing else in the package is.
 */

/** Queues and dead-letter policies to create at start: the config file's format (docs/extensions.md). */
export interface RedriveConfig {
  policies?: Array<{ name: string; pattern: string; priority?: number; definition: ServerPolicyDefinition }>;
  queues?: Array<{
    name: string;
    accountId?: string;
    attributes?: Record<string, string | number | boolean>;
    tags?: Record<string, string | number | boolean>;
    deadLetterQueue?: { name: string; maxReceiveCount: number };
  }>;
}

/** `redrive serve`'s flags, in camelCase; every one optional. */
export interface RedriveOptions {
  /** `memory` (the default here), `sqlite`, or a `postgres://user@host:port/db` URL. */
  storage?: string;
  /** With `storage: 'sqlite'`: the directory of the database; by default a new temporary one, removed by close(). */
  dataDir?: string;
  durability?: 'process' | 'power';
  /** Default `127.0.0.1`. */
  host?: string;
  /** Default `0`: a free port. */
  port?: number;
  region?: string;
  accountId?: string;
  /** Queues and policies to create at start, as the config file holds them. */
  config?: RedriveConfig;
  /** A config file (JSON or YAML) instead of `config`. */
  configFile?: string;
  /** A JSON file of access keys: turns on SigV4 checking; the first key is the one returned. */
  credentials?: string;
  /** Also serve AMQP 0-9-1 on this port (`0`: a free one); off by default. */
  amqpPort?: number;
  /** The web console under /console; default `on`. */
  console?: 'on' | 'off';
  nodeId?: string;
  metricsAddress?: string;
  metricsTokenFile?: string;
  /** The server's JSON log lines on standard output; default `silent`. */
  logLevel?: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Seconds close() waits, answering 503 on /ready, before it stops; default 0. */
  shutdownGrace?: number;
  /** HTTP threads in front of the thread that owns the store (docs/scaling.md); default 1. */
  threads?: number;
}

export interface RedriveCredentials {
  accessKeyId: string;
  secretAccessKey: string;
}

export interface RunningRedrive {
  /** `http://127.0.0.1:<port>`: the SQS endpoint, the console at `/console`. */
  endpoint: string;
  region: string;
  accountId: string;
  /** Credentials the server accepts (any are accepted without the `credentials` option). */
  credentials: RedriveCredentials;
  /** `new SQSClient(redrive.sqsClientConfig)`: endpoint, region and credentials. */
  sqsClientConfig: { endpoint: string; region: string; credentials: RedriveCredentials };
  /** `amqp://guest:guest@127.0.0.1:<port>` when `amqpPort` was given. */
  amqpUrl?: string;
  /** Stops the server and frees everything it holds (ports, database, temporary directory). */
  close(): Promise<void>;
}

/** Any credentials do without a credentials file; not 12 digits, which would name an account. */
const ANY_CREDENTIALS: RedriveCredentials = { accessKeyId: 'redrive', secretAccessKey: 'redrive' };

/** The first key of a credentials file, and its account. */
function firstKey(file: string): { credentials: RedriveCredentials; accountId?: string } {
  const [entry] = readCredentials(file);
  if (!entry) return { credentials: ANY_CREDENTIALS };
  const [accessKeyId, key] = entry;
  return { credentials: { accessKeyId, secretAccessKey: key.secretAccessKey }, accountId: key.accountId };
}

/** AMQP signs in with an access key and its secret, or RabbitMQ's guest/guest from loopback without credentials. */
function amqpUrl(endpoint: string, port: number, key?: RedriveCredentials): string {
  const url = new URL(endpoint);
  const user = key
    ? `${encodeURIComponent(key.accessKeyId)}:${encodeURIComponent(key.secretAccessKey)}`
    : 'guest:guest';
  return `amqp://${user}@${url.hostname}:${port}`;
}

/** Starts a Redrive server in this process; resolves once it accepts requests. */
export async function startRedrive(options: RedriveOptions = {}): Promise<RunningRedrive> {
  const { config, configFile, shutdownGrace = 0, ...flags } = options;
  const storage = flags.storage ?? 'memory';
  // A temporary SQLite directory is this server's alone, so close() may remove it.
  const tempDir =
    storage === 'sqlite' && flags.dataDir === undefined ? mkdtempSync(join(tmpdir(), 'redrive-')) : undefined;
  const serverConfig: ServerConfig = {
    ...defaults,
    port: 0,
    logLevel: 'silent',
    ...flags,
    storage,
    dataDir: flags.dataDir ?? tempDir ?? defaults.dataDir,
    configFile,
    configValue: config,
    storageFromFlag: flags.storage !== undefined,
    shutdownGraceMs: shutdownGrace * 1000,
  };
  const removeTemp = () => tempDir && rmSync(tempDir, { recursive: true, force: true });
  let server: Awaited<ReturnType<typeof startServer>>;
  try {
    server = await startServer(serverConfig);
  } catch (e) {
    removeTemp();
    throw e;
  }
  // With a credentials file, the key decides the account.
  const key = options.credentials ? firstKey(options.credentials) : { credentials: ANY_CREDENTIALS };
  const { credentials } = key;
  const endpoint = server.url;
  const region = serverConfig.region;
  return {
    endpoint,
    region,
    accountId: key.accountId ?? serverConfig.accountId,
    credentials,
    sqsClientConfig: { endpoint, region, credentials },
    amqpUrl:
      server.amqpPort === undefined
        ? undefined
        : amqpUrl(endpoint, server.amqpPort, options.credentials ? credentials : undefined),
    close: async () => {
      await server.stop();
      removeTemp();
    },
  };
}

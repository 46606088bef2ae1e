import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before } from 'node:test';
import { SQSClient, type SQSClientConfig } from '@aws-sdk/client-sqs';
import { SignatureV4 } from '@smithy/signature-v4';
import { Sha256 } from '../../src/cli/credentials.js';
import { createTestDatabase, type TestDatabase } from './postgres.js';

const CLI = fileURLToPath(new URL('../../src/cli/index.js', import.meta.url));

export interface ServerProcessOptions {
  storage?: 'sqlite' | 'memory' | string;
  /** Reuse a data directory (restart tests); a fresh temporary one otherwise. */
  dataDir?: string;
  /** A manual clock, moved with advanceClock(). */
  manualClock?: boolean;
  args?: string[];
  /** A command the server runs under, e.g. openFileLimit(1024); it must exec the server. */
  prefix?: string[];
  /** Access keys: written to a file in the data directory, which `--credentials` names. */
  credentials?: Record<string, { secretAccessKey: string; accountId: string }>;
}

export interface ServerProcess {
  url: string;
  dataDir: string;
  proc: ChildProcess;
  /** Everything the server printed, for assertions on logs. */
  output(): string;
  client(): SQSClient;
  advanceClock(ms: number): Promise<number>;
  /** SIGTERM and wait for exit. */
  stop(): Promise<number | null>;
  /** SIGKILL and wait for exit. */
  kill(): Promise<void>;
  /** Removes the data directory if this helper created it. */
  cleanup(): void;
}

/**
 * A `prefix` that runs the server with an open-file limit of `n`, soft and hard, or
 * undefined when this machine's limit cannot be lowered to it. The shell's `ulimit`, not
 * util-linux's prlimit, which a laptop (macOS, a minimal Linux) may not have.
 */
export function openFileLimit(n: number): string[] | undefined {
  const script = `ulimit -n ${n} && exec "$0" "$@"`;
  return spawnSync('sh', ['-c', script, 'true'], { stdio: 'ignore' }).status === 0 ? ['sh', '-c', script] : undefined;
}

/** Starts `redrive serve` as a real child process on a random loopback port. */
export async function startServerProcess(opts: ServerProcessOptions = {}): Promise<ServerProcess> {
  const owned = !opts.dataDir;
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'redrive-test-'));
  const storage = await storageFor(opts.storage ?? 'sqlite', dataDir);
  const keysFile = opts.credentials && join(dataDir, 'credentials.json');
  if (keysFile) writeFileSync(keysFile, JSON.stringify(opts.credentials));
  const serverArgs = [...(keysFile ? ['--credentials', keysFile] : []), ...(opts.args ?? [])];
  const args = [
    '--enable-source-maps',
    CLI,
    'serve',
    '--port',
    '0',
    '--host',
    '127.0.0.1',
    '--storage',
    storage,
    '--data-dir',
    dataDir,
    '--log-level',
    'info',
    ...(opts.manualClock ? ['--clock', 'manual'] : []),
    ...threadsFor(serverArgs),
    ...serverArgs,
  ];
  const [command, ...before] = [...(opts.prefix ?? []), process.execPath];
  const proc = spawn(command!, [...before, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    // Generous, for a loaded machine; a server that does not start is killed, not left behind
    // to keep the test file's process alive (nothing else would stop it).
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`server did not start within 60 s:\n${out}`));
    }, 60_000);
    const onData = () => {
      const m = /"url":"(http:\/\/[^"]+)"[^\n]*"msg":"listening"/.exec(out);
      if (m) {
        clearTimeout(timer);
        proc.stdout!.off('data', onData);
        resolve(m[1]!);
      }
    };
    proc.stdout!.on('data', onData);
    proc.once('exit', () => reject(new Error(`server exited:\n${readable(out)}`)));
  });
  const clients: SQSClient[] = [];
  return {
    url,
    dataDir,
    proc,
    output: () => out,
    client: () => {
      const c = sqsClient(url);
      clients.push(c);
      return c;
    },
    advanceClock: async (ms) => {
      const body = JSON.stringify({ advanceMs: ms });
      const host = new URL(url).host;
      let headers: Record<string, string> = { host, 'content-type': 'application/json' };
      // With --credentials the clock moves only for a signed request: sign with the file's first key.
      const keys = credentialsOf(serverArgs);
      if (keys) {
        const signed = await new SignatureV4({
          service: 'sqs',
          region: 'us-east-1',
          credentials: keys,
          sha256: Sha256,
          applyChecksum: false,
        }).sign({ method: 'POST', protocol: 'http:', hostname: '127.0.0.1', path: '/_redrive/clock', headers, body });
        headers = signed.headers as Record<string, string>;
      }
      const res = await fetch(`${url}/_redrive/clock`, { method: 'POST', headers, body });
      if (!res.ok) throw new Error(`advanceClock: ${res.status} ${await res.text()}`);
      return ((await res.json()) as { now: number }).now;
    },
    stop: async () => {
      clients.forEach((c) => c.destroy());
      proc.kill('SIGTERM');
      return exited;
    },
    kill: async () => {
      clients.forEach((c) => c.destroy());
      proc.kill('SIGKILL');
      await exited;
    },
    cleanup: () => {
      if (!owned) return;
      rmSync(dataDir, { recursive: true, force: true });
      void postgresByDataDir
        .get(dataDir)
        ?.drop()
        .catch(() => undefined);
      postgresByDataDir.delete(dataDir);
    },
  };
}

/** The first access key of a `--credentials` file among the server's arguments, if any. */
function credentialsOf(args: string[]): { accessKeyId: string; secretAccessKey: string } | undefined {
  const i = args.indexOf('--credentials');
  if (i < 0 || !args[i + 1]) return undefined;
  const file = JSON.parse(readFileSync(args[i + 1]!, 'utf8')) as Record<string, { secretAccessKey: string }>;
  const [accessKeyId, key] = Object.entries(file)[0] ?? [];
  return accessKeyId && key ? { accessKeyId, secretAccessKey: key.secretAccessKey } : undefined;
}

/**
 * REDRIVE_TEST_STORAGE=postgres runs every test server that would use SQLite on a fresh
 * PostgreSQL database instead, one per data directory (so a restarted server finds its
 * data), to check the PostgreSQL store end to end with the same tests.
 */
const postgresByDataDir = new Map<string, TestDatabase>();

async function storageFor(storage: string, dataDir: string): Promise<string> {
  if (process.env.REDRIVE_TEST_STORAGE !== 'postgres' || storage !== 'sqlite') return storage;
  let db = postgresByDataDir.get(dataDir);
  if (!db) postgresByDataDir.set(dataDir, (db = await createTestDatabase()));
  return db.url;
}

/**
 * REDRIVE_TEST_THREADS=N runs every test server with `--threads N` (unless the test names
 * its own), to check the HTTP threads' hand-off to the owner thread with the same tests.
 */
function threadsFor(args: string[]): string[] {
  const n = process.env.REDRIVE_TEST_THREADS;
  return n && !args.includes('--threads') ? ['--threads', n] : [];
}

/** The output with each JSON log line's message written out, so a test can match its text. */
function readable(out: string): string {
  return out
    .split('\n')
    .map((line) => {
      try {
        const entry = JSON.parse(line) as { msg?: unknown };
        return typeof entry.msg === 'string' ? entry.msg : line;
      } catch {
        return line;
      }
    })
    .join('\n');
}

export function sqsClient(url: string, extra: SQSClientConfig = {}): SQSClient {
  return new SQSClient({
    endpoint: url,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    maxAttempts: 1,
    ...extra,
  });
}

/**
 * The server of a file's (or a suite's) tests: started before them, stopped after them
 * with its data removed. `opts` may be a function, called when the server starts (after
 * the hooks registered before this call). `onStart` receives the running server and may
 * prepare more (queues, clients); `onStop` runs before the server stops (closing drivers).
 */
export function useServerProcess(
  opts: ServerProcessOptions | (() => ServerProcessOptions),
  onStart: (server: ServerProcess) => unknown,
  onStop?: () => unknown,
): void {
  let server: ServerProcess | undefined;
  before(async () => {
    server = await startServerProcess(typeof opts === 'function' ? opts() : opts);
    await onStart(server);
  });
  after(async () => {
    try {
      await onStop?.();
    } finally {
      if (server) {
        await server.stop();
        server.cleanup();
      }
    }
  });
}

/** Runs `run` against a server of its own, then stops the server (unless `run` did) and removes its data. */
export async function withServerProcess<T>(
  opts: ServerProcessOptions,
  run: (server: ServerProcess) => Promise<T>,
): Promise<T> {
  const server = await startServerProcess(opts);
  try {
    return await run(server);
  } finally {
    if (server.proc.exitCode === null && server.proc.signalCode === null) await server.stop();
    server.cleanup();
  }
}

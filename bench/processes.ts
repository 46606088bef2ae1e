import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

/**
 * Every child the benchmark starts is registered here, so that no server or load
 * generator outlives the run: not on success, not on an error, not on Ctrl-C.
 */
const children = new Set<ChildProcess>();

export function track(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

export function killAll(): void {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  children.clear();
}

/**
 * Asynchronous clean-ups (dropping a benchmark database) that an interrupted run must
 * still do. Each is registered while its resource exists and removed once it is gone.
 */
const cleanups = new Set<() => Promise<void>>();

export function atInterrupt(cleanup: () => Promise<void>): () => void {
  cleanups.add(cleanup);
  return () => cleanups.delete(cleanup);
}

/** Runs every pending clean-up, for at most `ms`. */
export async function runCleanups(ms = 5000): Promise<void> {
  const all = Promise.allSettled([...cleanups].map((c) => c()));
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([all, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

process.once('exit', killAll);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    // Servers first, so nothing holds a database the clean-ups drop.
    killAll();
    void runCleanups().finally(() => process.exit(130));
  });
}

export interface ServerProcess {
  url: string;
  pid: number;
  /** The AMQP listener's port, when the server was started with `--amqp-port` (0 picks one). */
  amqpPort?: number;
  /** Asks the server to shut down, and kills it if it does not within a few seconds. */
  stop(): Promise<void>;
  /** SIGKILL, as a crash would; resolves once the process is gone. */
  kill(): Promise<void>;
}

/**
 * Starts `node <args>` and waits for its JSON "listening" log line (Redrive's pino
 * line, and the canned server's imitation of it) to learn the URL.
 */
export function startServerProcess(args: string[], nodeArgs: string[] = []): Promise<ServerProcess> {
  const child = track(spawn(process.execPath, [...nodeArgs, ...args], { stdio: ['ignore', 'pipe', 'pipe'] }));
  let stderr = '';
  let amqpPort: number | undefined;
  child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error('server did not start within 15 s')), 15_000);
    const fail = (err: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${err.message}\n${stderr}`));
    };
    child.once('exit', (code) => fail(new Error(`server exited early with code ${code}`)));
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      // Kept for the error of a server that exits: its reason is a JSON line on stdout.
      stderr = `${stderr + line}\n`.slice(-2000);
      const amqp = /"amqpPort":(\d+)/.exec(line);
      if (amqp) amqpPort = Number(amqp[1]);
      const m = /"url":"([^"]+)"/.exec(line);
      if (!m || !line.includes('"listening"')) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      lines.removeAllListeners('line');
      // Keep draining stdout so that a chatty server can never block on a full pipe.
      child.stdout!.resume();
      resolve({
        url: m[1]!,
        pid: child.pid!,
        amqpPort,
        stop: () => stopProcess(child),
        kill: () => killProcess(child),
      });
    });
  });
}

export function killProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

export function stopProcess(child: ChildProcess, graceMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Resident set size of a process in bytes (VmRSS in /proc/<pid>/status); undefined once it is gone. */
export function processRssBytes(pid: number): number | undefined {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Linux clock ticks per second for /proc/<pid>/stat; 100 on every common kernel. */
const CLOCK_TICKS = 100;

/**
 * CPU time (user + system, all threads) a process has used so far, in seconds; with
 * `reaped`, also that of its children that have exited and been waited for.
 */
export function processCpuSeconds(pid: number, reaped = false): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may contain spaces, so count fields after its ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  const children = reaped ? Number(fields[13]) + Number(fields[14]) : 0;
  return (utime + stime + children) / CLOCK_TICKS;
}

/**
 * CPU time all processes on the machine have used so far, in seconds (every core
 * counted). Minus the server's and the client's share, it says how much other work
 * competed with the benchmark during a window.
 */
export function machineBusySeconds(): number {
  const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/);
  // Fields: user nice system idle iowait irq softirq steal; idle and iowait are not work.
  const [user, nice, system, , , irq, softirq, steal] = ticks.map(Number) as number[];
  return (user! + nice! + system! + irq! + softirq! + steal!) / CLOCK_TICKS;
}

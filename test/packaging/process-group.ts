/**
 * Server commands run as a user runs them from a shell: each in a process group of its own
 * (a job), with a user's environment, stopped by a signal to the process or to the group.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess, type SpawnSyncOptions } from 'node:child_process';
import { after } from 'node:test';

/**
 * The environment npm would have in a user's shell: `npm test` exports npm_package_*,
 * npm_config_local_prefix, INIT_CWD and the like naming the checkout, which must not leak
 * into a user's install. npm_config_nodedir stays: scripts/with-node.sh sets it to the
 * headers of the Node it tests, and node-gyp must build against those.
 */
export function userEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    // NODE_TEST_CONTEXT, set by `node --test` for the file it runs, would make a user's own
    // `node --test` report to this runner rather than print.
    if (k === 'INIT_CWD' || k === 'NODE_TEST_CONTEXT' || (/^npm_/i.test(k) && k.toLowerCase() !== 'npm_config_nodedir'))
      continue;
    env[k] = v;
  }
  return env;
}

/** Runs a command to completion; it must exit 0. Returns its stdout. */
export function run(command: string, args: string[], opts: SpawnSyncOptions): string {
  const r = spawnSync(command, args, { encoding: 'utf8', env: userEnv(), maxBuffer: 64 << 20, ...opts });
  assert.equal(r.error, undefined, `${command} ${args.join(' ')}: ${r.error}`);
  assert.equal(r.status, 0, `${command} ${args.join(' ')} exited ${r.status}:\n${r.stdout}\n${r.stderr}`);
  return `${r.stdout}`;
}

type Exit = { code: number | null; signal: NodeJS.Signals | null };

export interface Job {
  proc: ChildProcess;
  output(): string;
  exit: Promise<Exit>;
}

export interface Running extends Job {
  url: string;
  /** From spawning the command to the server's "listening" line. */
  startMs: number;
}

/** Every job's process group, killed after the file's tests if a failed test left one. */
const groups = new Set<number>();
after(() => {
  for (const pid of groups) if (groupAlive(pid)) process.kill(-pid, 'SIGKILL');
});

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Spawns a command as a job, capturing its output. */
export function startJob(command: string, args: string[], cwd: string): Job {
  const proc = spawn(command, args, { cwd, env: userEnv(), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  groups.add(proc.pid!);
  let out = '';
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  const exit = new Promise<Exit>((resolve) => proc.once('exit', (code, signal) => resolve({ code, signal })));
  return { proc, output: () => out, exit };
}

/** Spawns a `redrive serve` command as a job and waits for its "listening" line. */
export async function serve(command: string, args: string[], cwd: string): Promise<Running> {
  const started = performance.now();
  const job = startJob(command, args, cwd);
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${command} did not start in 30 s:\n${job.output()}`)), 30_000);
    const onData = () => {
      const m = /"url":"(http:\/\/[^"]+)"[^\n]*"msg":"listening"/.exec(job.output());
      if (!m) return;
      clearTimeout(timer);
      resolve(m[1]!);
    };
    job.proc.stdout!.on('data', onData);
    void job.exit.then(() => {
      clearTimeout(timer);
      reject(new Error(`${command} exited before listening:\n${job.output()}`));
    });
  });
  return { ...job, url, startMs: performance.now() - started };
}

/**
 * Sends `signal` to the job's process alone, or to its whole process group (what Ctrl-C in
 * a terminal, or systemd stopping a unit, does); then the exit, and the end of every
 * process of the group, must follow within `ms`. Whatever is left then is killed and the
 * test fails.
 */
export async function stopJob(
  job: Job,
  to: 'process' | 'group',
  signal: 'SIGTERM' | 'SIGINT' = 'SIGTERM',
  ms = 10_000,
): Promise<Exit> {
  const pid = job.proc.pid!;
  if (to === 'group') process.kill(-pid, signal);
  else job.proc.kill(signal);
  const deadline = performance.now() + ms;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no exit ${ms} ms after ${signal}:\n${job.output()}`)), ms);
  });
  try {
    const exit = await Promise.race([job.exit, late]);
    while (groupAlive(pid) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.ok(!groupAlive(pid), `processes of the job's group are left ${ms} ms after ${signal}:\n${job.output()}`);
    return exit;
  } finally {
    clearTimeout(timer);
    if (groupAlive(pid)) process.kill(-pid, 'SIGKILL');
  }
}

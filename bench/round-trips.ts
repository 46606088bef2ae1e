import { appendFileSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

/**
 * Round trips to PostgreSQL, counted in the client: every `Client.query` call of
 * node-postgres is one exchange with the server (a multi-statement simple query counts
 * once, as it is one). Redrive's servers are separate processes, so they load
 * `pg-round-trips.js` with --import, which counts and, on SIGUSR2, appends the count so
 * far to a file the orchestrator reads; the pg-boss load child counts in-process.
 */
let count = 0;
let patched = false;

/** Starts counting this process's round trips; returns the count so far on each call. */
export function countRoundTrips(): () => number {
  if (!patched) {
    patched = true;
    const original = pg.Client.prototype.query;
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      count++;
      return (original as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof original;
  }
  return () => count;
}

const dir = () => process.env.REDRIVE_BENCH_ROUND_TRIPS_DIR ?? tmpdir();
const file = (pid: number) => join(dir(), `redrive-bench-round-trips-${pid}`);

/** In a server (pg-round-trips.js): append the count to this process's file on each SIGUSR2. */
export function reportOnSignal(): void {
  const read = countRoundTrips();
  process.on('SIGUSR2', () => appendFileSync(file(process.pid), `${read()}\n`));
}

/** The server's node flags that load the counter. */
export function roundTripNodeArgs(): string[] {
  return ['--import', fileURLToPath(new URL('./pg-round-trips.js', import.meta.url))];
}

/** Asks each server for its count (at a window's start or end). */
export function markRoundTrips(pids: number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGUSR2');
    } catch {
      // The server is gone: its round trips are unknown.
    }
  }
}

/**
 * Round trips of the servers between their first two marks, once every server wrote
 * both (each answers on its own event loop, so this waits up to `ms`); undefined if one never did.
 */
export async function roundTripsBetweenMarks(pids: number[], ms = 2000): Promise<number | undefined> {
  const until = Date.now() + ms;
  for (;;) {
    const marks = pids.map((pid) => {
      try {
        return readFileSync(file(pid), 'utf8').trim().split('\n').map(Number);
      } catch {
        return [];
      }
    });
    if (marks.every((m) => m.length >= 2)) {
      for (const pid of pids) rmSync(file(pid), { force: true });
      return marks.reduce((sum, m) => sum + m[1]! - m[0]!, 0);
    }
    if (Date.now() > until) return undefined;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

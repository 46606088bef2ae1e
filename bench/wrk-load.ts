import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LoadSpec } from './protocol.js';
import type { Window } from './window.js';

/**
 * W1 under wrk (`send-wrk`): SendMessage flat out from wrk, a C load generator, on one
 * thread (`-t1`) and `spec.producers` connections. Node's client costs about as much CPU
 * per request as the server's HTTP stack, so on a 2-core machine it took the core a
 * second HTTP thread needs; wrk leaves it (docs/scaling.md). wrk runs once for the
 * warm-up and once for the measured window; its CPU (a child's, reaped) is the client's.
 */
export async function runWrk(spec: LoadSpec, w: Window): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'redrive-wrk-'));
  try {
    const script = join(dir, 'send.lua');
    const body = JSON.stringify({ QueueUrl: spec.queue, MessageBody: 'x'.repeat(spec.bodyBytes) });
    writeFileSync(
      script,
      [
        'wrk.method = "POST"',
        `wrk.body = ${luaString(body)}`,
        'wrk.headers["Content-Type"] = "application/x-amz-json-1.0"',
        'wrk.headers["X-Amz-Target"] = "AmazonSQS.SendMessage"',
        '',
      ].join('\n'),
    );
    const run = (seconds: number) =>
      wrk([
        '-t1',
        `-c${spec.producers}`,
        `-d${Math.max(1, Math.round(seconds))}s`,
        '--latency',
        '-s',
        script,
        `${spec.target}/`,
      ]);
    await run(spec.warmupSeconds);
    await w.opened;
    const cpuBefore = childrenCpuSeconds();
    const out = await run(spec.seconds);
    const report = parseWrk(out);
    w.external({ ...report, cpuSeconds: childrenCpuSeconds() - cpuBefore });
    await w.closed;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function wrk(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', (e) => reject(new Error(`wrk: ${e.message} (Debian: apt-get install wrk)`)));
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`wrk exited ${code}: ${out}`))));
  });
}

const luaString = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

/** Requests, errors (non-2xx answers and socket errors) and latency percentiles in ms, from wrk's report. */
function parseWrk(out: string): { requests: number; errors: number; p50: number; p99: number } {
  const requests = Number(/(\d+) requests in/.exec(out)?.[1]);
  if (!Number.isFinite(requests)) throw new Error(`no request count in wrk's report:\n${out}`);
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const socketErrors = socket ? socket.slice(1).reduce((a, b) => a + Number(b), 0) : 0;
  return { requests, errors: non2xx + socketErrors, p50: percentile(out, '50%'), p99: percentile(out, '99%') };
}

function percentile(out: string, label: string): number {
  const m = new RegExp(`^\\s*${label}\\s+([\\d.]+)(us|ms|s)\\s*$`, 'm').exec(out);
  if (!m) return Number.NaN;
  const unit = { us: 0.001, ms: 1, s: 1000 }[m[2] as 'us' | 'ms' | 's'];
  return Number(m[1]) * unit;
}

/** CPU seconds of this process's reaped children (utime + stime of /proc/self/stat's cutime, cstime). */
function childrenCpuSeconds(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 16 and 17 of the file (cutime, cstime): indexes 13 and 14 after the command.
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

import { readdirSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { config } from './config.js';
import { measure, type Measurement } from './measure.js';
import { processRssBytes, startServerProcess, type ServerProcess } from './processes.js';
import { createQueue, nodeArgs, serveArgs, sqsCall, tempDataDir } from './targets.js';

/**
 * W4, the backlog: preload `total` messages with SendMessageBatch from several
 * connections, restart the server on that data twice (after SIGTERM, then after
 * SIGKILL) and time each restart from spawn to the first successful request, then
 * warm the new process up for two seconds on another queue, and drain the backlog with
 * ReceiveMessage(10) + DeleteMessageBatch on 32 connections. The server's RSS is
 * sampled from /proc throughout. SQLite store, durability `process`, as in W1–W3.
 */

const PRODUCERS = 16;
const CONSUMERS = 32;
const RSS_SAMPLE_MS = 100;
/** Longest a restart may take before the run gives up on it. */
const RESTART_LIMIT_MS = 60_000;
/** Unmeasured cycle on another queue between the restarts and the drain. */
const WARMUP_SECONDS = 2;

export interface BacklogPhase {
  seconds: number;
  rate: number;
  messages: number;
  complete: boolean;
  serverCpu?: number;
  clientCpu: number;
  serverMicrosPerMessage?: number;
  otherCpu?: number;
  errors: number;
  firstError?: string;
}

export interface BacklogFigures {
  messages: number;
  /** Size of the data directory (database, WAL, shared memory) after the preload. */
  dataBytes: number;
  preload: BacklogPhase;
  /** SIGTERM: how long the server took to shut down, then spawn → first successful request. */
  restartAfterSigterm: { shutdownSeconds: number; startSeconds: number };
  /** SIGKILL with the backlog on disk, then spawn → first successful request. */
  restartAfterSigkill: { startSeconds: number };
  /** ApproximateNumberOfMessages after the restarts: must equal `messages`. */
  depthAfterRestart?: number;
  depthQuerySeconds?: number;
  drain: BacklogPhase;
  /** Highest RSS sampled in each phase, and overall. */
  maxRssBytes: { preload?: number; restart?: number; drain?: number; all?: number };
  /** One RSS sample a second (MiB, seconds since the preload began), to show any growth trend. */
  rssTimeline: { phase: string; t: number; mib: number }[];
}

function phase(m: Measurement, messages: number): BacklogPhase {
  return {
    seconds: m.seconds,
    rate: m.rate,
    messages,
    complete: m.raw.complete === true,
    serverCpu: m.serverCpu,
    clientCpu: m.clientCpu,
    serverMicrosPerMessage: m.serverMicrosPerMessage,
    otherCpu: m.otherCpu,
    errors: m.errors,
    firstError: m.firstError,
  };
}

/** Samples the current server's RSS every 100 ms into the current phase's maximum. */
class RssSampler {
  pid?: number;
  phase: 'preload' | 'restart' | 'drain' = 'preload';
  readonly max: BacklogFigures['maxRssBytes'] = {};
  readonly timeline: BacklogFigures['rssTimeline'] = [];
  private readonly started = performance.now();
  private lastKept = -Infinity;
  private readonly timer = setInterval(() => this.sample(), RSS_SAMPLE_MS);

  sample(): void {
    const rss = this.pid === undefined ? undefined : processRssBytes(this.pid);
    if (rss === undefined) return;
    this.max[this.phase] = Math.max(this.max[this.phase] ?? 0, rss);
    this.max.all = Math.max(this.max.all ?? 0, rss);
    const now = performance.now();
    if (now - this.lastKept >= 1000) {
      this.lastKept = now;
      this.timeline.push({
        phase: this.phase,
        t: Math.round((now - this.started) / 100) / 10,
        mib: Math.round(rss / 2 ** 20),
      });
    }
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

/** A port free right now on loopback, so a restarted server comes back where clients expect it. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

function directoryBytes(dir: string): number {
  return readdirSync(dir).reduce((n, f) => n + statSync(join(dir, f)).size, 0);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Spawns a server on `port` and times spawn → first successful request (GetQueueUrl),
 * polling every 5 ms. Resolves with the server and the seconds it took.
 */
async function timedStart(dataDir: string, port: number): Promise<{ server: ServerProcess; seconds: number }> {
  const url = `http://127.0.0.1:${port}`;
  const t0 = performance.now();
  const starting = startServerProcess(serveArgs('sqlite', dataDir, 'process', port), nodeArgs());
  let failed = false;
  starting.catch(() => (failed = true));
  let seconds: number | undefined;
  while (seconds === undefined && !failed && performance.now() - t0 < RESTART_LIMIT_MS) {
    try {
      await sqsCall(url, 'GetQueueUrl', { QueueName: 'bench' });
      seconds = (performance.now() - t0) / 1000;
    } catch {
      await sleep(5);
    }
  }
  const server = await starting;
  if (seconds === undefined) {
    await server.stop();
    throw new Error(`restarted server answered no request within ${RESTART_LIMIT_MS} ms`);
  }
  return { server, seconds };
}

export async function runBacklog(total: number, log: (line: string) => void): Promise<BacklogFigures> {
  const data = tempDataDir();
  const rss = new RssSampler();
  let server: ServerProcess | undefined;
  try {
    const port = await freePort();
    server = await startServerProcess(serveArgs('sqlite', data.dir, 'process', port), nodeArgs());
    rss.pid = server.pid;
    const queue = await createQueue(server.url);
    const spec = {
      target: server.url,
      queue,
      bodyBytes: config.bodyBytes,
      warmupSeconds: 0,
      seconds: config.backlogLimitSeconds,
      total,
    };

    const pre = await measure({ ...spec, kind: 'preload', producers: PRODUCERS, consumers: 0 }, 'sent', {
      serverPids: [server.pid],
    });
    const preloaded = pre.raw.sent;
    rss.sample();
    log(
      `  preload: ${preloaded} messages in ${pre.seconds.toFixed(1)} s (${Math.round(pre.rate)} msg/s)${pre.errors ? `, ${pre.errors} errors: ${pre.firstError}` : ''}`,
    );
    const dataBytes = directoryBytes(data.dir);

    rss.phase = 'restart';
    let t = performance.now();
    await server.stop();
    const shutdownSeconds = (performance.now() - t) / 1000;
    rss.pid = undefined;
    let restart = await timedStart(data.dir, port);
    server = restart.server;
    rss.pid = server.pid;
    rss.sample();
    const afterSigterm = { shutdownSeconds, startSeconds: restart.seconds };
    log(
      `  restart after SIGTERM: shutdown ${shutdownSeconds.toFixed(2)} s, spawn → first request ${restart.seconds.toFixed(2)} s`,
    );

    await server.kill();
    rss.pid = undefined;
    restart = await timedStart(data.dir, port);
    server = restart.server;
    rss.pid = server.pid;
    rss.sample();
    log(`  restart after SIGKILL: spawn → first request ${restart.seconds.toFixed(2)} s`);

    t = performance.now();
    const attrs = (await sqsCall(server.url, 'GetQueueAttributes', {
      QueueUrl: queue,
      AttributeNames: ['ApproximateNumberOfMessages'],
    })) as { Attributes?: Record<string, string> };
    const depthQuerySeconds = (performance.now() - t) / 1000;
    const depth = Number(attrs.Attributes?.ApproximateNumberOfMessages);
    rss.sample();
    log(`  depth after restarts: ${depth} (GetQueueAttributes took ${(depthQuerySeconds * 1000).toFixed(0)} ms)`);

    // The restarted process is cold (no JIT, empty SQLite cache): two seconds of W3's cycle
    // on another queue warm it up, so that a short drain is not mostly warm-up.
    const warmQueue = await createQueue(server.url, false, 'bench-warmup');
    await measure(
      { ...spec, queue: warmQueue, kind: 'cycle', producers: 8, consumers: 8, seconds: WARMUP_SECONDS },
      'consumed',
    );

    rss.phase = 'drain';
    const toDrain = Number.isFinite(depth) ? depth : preloaded;
    const drain = await measure(
      { ...spec, total: toDrain, kind: 'drain', producers: 0, consumers: CONSUMERS },
      'consumed',
      { serverPids: [server.pid] },
    );
    rss.sample();
    log(
      `  drain: ${drain.raw.consumed} messages in ${drain.seconds.toFixed(1)} s (${Math.round(drain.rate)} msg/s), server CPU ${Math.round(drain.serverCpu ?? 0)}%` +
        `${drain.errors ? `, ${drain.errors} errors: ${drain.firstError}` : ''}`,
    );

    return {
      messages: preloaded,
      dataBytes,
      preload: phase(pre, preloaded),
      restartAfterSigterm: afterSigterm,
      restartAfterSigkill: { startSeconds: restart.seconds },
      depthAfterRestart: Number.isFinite(depth) ? depth : undefined,
      depthQuerySeconds,
      drain: phase(drain, drain.raw.consumed),
      maxRssBytes: rss.max,
      rssTimeline: rss.timeline,
    };
  } finally {
    rss.stop();
    await server?.stop();
    data.remove();
  }
}

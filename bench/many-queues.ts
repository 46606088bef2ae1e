/**
 * W6, many queues: a SQLite server holding BENCH_QUEUES queues (100,000 by
 * default), one message in every tenth, left idle. Measured: the server's CPU while idle
 * (over BENCH_IDLE_SECONDS, which should cover a retention pass: they run at least once a
 * minute), its RSS, a restart (SIGTERM, then spawn until the first answered request), and
 * ListQueues paging through every queue 1,000 at a time. Targets: idle CPU under 2% of a
 * core, RSS under 300 MB, restart under 3 s, paging under 2 s.
 *
 * Run alone with `BENCH_ONLY=W6 npm run bench`, or `node dist/bench/many-queues.js`.
 */
import { pathToFileURL } from 'node:url';
import { processCpuSeconds, processRssBytes, startServerProcess, type ServerProcess } from './processes.js';
import { nodeArgs, serveArgs, sqsCall, tempDataDir } from './targets.js';

export interface ManyQueuesFigures {
  queues: number;
  createSeconds: number;
  idleCpuPercent: number;
  idleSeconds: number;
  rssMb: number;
  shutdownSeconds: number;
  restartSeconds: number;
  rssAfterRestartMb: number;
  listSeconds: number;
  listed: number;
}

const envInt = (name: string, fallback: number) => Math.round(Number(process.env[name] || fallback));
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs `fn` for 0..n-1 with `width` calls in flight. */
async function pool(n: number, width: number, fn: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) await fn(next++);
    }),
  );
}

async function listAll(url: string): Promise<number> {
  let count = 0;
  let token: string | undefined;
  do {
    const page = (await sqsCall(url, 'ListQueues', { MaxResults: 1000, ...(token ? { NextToken: token } : {}) })) as {
      QueueUrls?: string[];
      NextToken?: string;
    };
    count += page.QueueUrls?.length ?? 0;
    token = page.NextToken;
  } while (token);
  return count;
}

export async function runManyQueues(log: (line: string) => void): Promise<ManyQueuesFigures> {
  const queues = envInt('BENCH_QUEUES', 100_000);
  const idleSeconds = envInt('BENCH_IDLE_SECONDS', 65);
  const data = tempDataDir();
  const args = serveArgs('sqlite', data.dir, 'process');
  let server: ServerProcess | undefined;
  try {
    server = await startServerProcess(args, nodeArgs());
    const url = server.url;
    const created = Date.now();
    await pool(queues, 32, async (i) => {
      const { QueueUrl } = (await sqsCall(url, 'CreateQueue', { QueueName: `q-${String(i).padStart(6, '0')}` })) as {
        QueueUrl: string;
      };
      if (i % 10 === 0) await sqsCall(url, 'SendMessage', { QueueUrl, MessageBody: 'idle' });
    });
    const createSeconds = (Date.now() - created) / 1000;
    log(
      `[W6] ${queues.toLocaleString('en-US')} queues created in ${createSeconds.toFixed(1)} s; idle for ${idleSeconds} s`,
    );

    // Let the creation's own work (checkpoints, GC) settle before the idle window.
    await pause(3_000);
    const cpu0 = processCpuSeconds(server.pid);
    const t0 = Date.now();
    await pause(idleSeconds * 1000);
    const idleCpuPercent = (100 * (processCpuSeconds(server.pid) - cpu0)) / ((Date.now() - t0) / 1000);
    const rssMb = (processRssBytes(server.pid) ?? 0) / 1024 / 1024;

    const stopped = Date.now();
    await server.stop();
    const shutdownSeconds = (Date.now() - stopped) / 1000;
    const spawned = Date.now();
    server = await startServerProcess(args, nodeArgs());
    await sqsCall(server.url, 'ListQueues', { MaxResults: 1 });
    const restartSeconds = (Date.now() - spawned) / 1000;

    const listed0 = Date.now();
    const listed = await listAll(server.url);
    const listSeconds = (Date.now() - listed0) / 1000;
    const rssAfterRestartMb = (processRssBytes(server.pid) ?? 0) / 1024 / 1024;
    return {
      queues,
      createSeconds,
      idleCpuPercent,
      idleSeconds,
      rssMb,
      shutdownSeconds,
      restartSeconds,
      rssAfterRestartMb,
      listSeconds,
      listed,
    };
  } finally {
    await server?.stop();
    data.remove();
  }
}

export function formatManyQueues(f: ManyQueuesFigures): string {
  return (
    `[W6] ${f.queues.toLocaleString('en-US')} queues: idle CPU ${f.idleCpuPercent.toFixed(2)}% of a core over ${f.idleSeconds} s (target < 2%), ` +
    `RSS ${Math.round(f.rssMb)} MB (< 300), restart ${f.restartSeconds.toFixed(2)} s (< 3; shutdown ${f.shutdownSeconds.toFixed(2)} s, RSS after ${Math.round(f.rssAfterRestartMb)} MB), ` +
    `ListQueues of all ${f.listed.toLocaleString('en-US')} in ${f.listSeconds.toFixed(2)} s (< 2)`
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  runManyQueues((line) => console.log(line)).then(
    (f) => {
      console.log(formatManyQueues(f));
      process.exit(0);
    },
    (e) => {
      console.error(e);
      process.exit(1);
    },
  );
}

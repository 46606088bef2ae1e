import { actions } from '../src/engine/actions/registry.js';
import { SystemClock } from '../src/engine/kernel/clock.js';
import { Engine } from '../src/engine/engine.js';
import type { RequestContext } from '../src/engine/kernel/types.js';
import { SqliteStore } from '../src/stores/sqlite/store.js';
import { config } from './config.js';
import { median, percentile } from './stats.js';
import { tempDataDir } from './targets.js';

/**
 * Fair queues (BENCH_ONLY=fair, docs/performance.md): one tenant sends 100 times as much
 * as each of 50 others, to a standard queue whose consumers cannot keep up, and the quiet
 * tenants' dwell time (receive time less SentTimestamp) is compared with fair queuing on
 * and off (the engine's `fairQueues` option). In process, on the SQLite store, so the
 * figure is the scheduling's, not HTTP's: every tick the noisy group sends TICK_NOISY
 * messages and each quiet group one; CONSUMERS loops receive 10, "work" WORK_MS, delete.
 */
const QUIET_GROUPS = 50;
const TICK_NOISY = 100 * 1;
const TICK_MS = 100;
const CONSUMERS = 10;
const WORK_MS = 100;
const SECONDS = Math.max(10, config.seconds * 4);

const ctx: RequestContext = {
  accountId: '000000000000',
  region: 'us-east-1',
  baseUrl: 'http://127.0.0.1:9324',
  requestId: 'bench',
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface FairFigures {
  fair: boolean;
  quietP50: number;
  quietP99: number;
  noisyP50: number;
  sent: number;
  received: number;
}

async function runOnce(fair: boolean): Promise<FairFigures> {
  const dir = tempDataDir();
  const engine = new Engine({
    store: new SqliteStore({ path: `${dir.dir}/redrive.db` }),
    clock: new SystemClock(),
    region: 'us-east-1',
    fairQueues: fair,
  });
  const call = (action: string, input: Record<string, unknown>) =>
    actions[action]!(engine, ctx, input) as Promise<Record<string, any>>;
  try {
    const { QueueUrl } = await call('CreateQueue', { QueueName: 'tenants', Attributes: { VisibilityTimeout: '60' } });
    const quiet: number[] = [];
    const noisy: number[] = [];
    let sent = 0;
    const end = Date.now() + SECONDS * 1000;
    const producer = (async () => {
      for (let _tick = 0; Date.now() < end; _tick++) {
        const started = Date.now();
        const entries = [
          ...Array.from({ length: TICK_NOISY }, () => 'noisy'),
          ...Array.from({ length: QUIET_GROUPS }, (_, g) => `quiet-${g}`),
        ];
        for (let i = 0; i < entries.length; i += 10) {
          const Entries = entries.slice(i, i + 10).map((g, k) => ({ Id: `e${k}`, MessageBody: g, MessageGroupId: g }));
          await call('SendMessageBatch', { QueueUrl, Entries });
          sent += Entries.length;
        }
        await sleep(Math.max(0, TICK_MS - (Date.now() - started)));
      }
    })();
    const consumer = async () => {
      while (Date.now() < end) {
        const r = await call('ReceiveMessage', {
          QueueUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 1,
          AttributeNames: ['SentTimestamp'],
        });
        const at = Date.now();
        const got = (r.Messages ?? []) as {
          Body: string;
          ReceiptHandle: string;
          Attributes: { SentTimestamp: string };
        }[];
        for (const m of got) (m.Body === 'noisy' ? noisy : quiet).push(at - Number(m.Attributes.SentTimestamp));
        await sleep(WORK_MS);
        if (got.length)
          await call('DeleteMessageBatch', {
            QueueUrl,
            Entries: got.map((m, i) => ({ Id: `d${i}`, ReceiptHandle: m.ReceiptHandle })),
          });
      }
    };
    await Promise.all([producer, ...Array.from({ length: CONSUMERS }, consumer)]);
    return {
      fair,
      sent,
      received: quiet.length + noisy.length,
      quietP50: percentile(quiet, 50),
      quietP99: percentile(quiet, 99),
      noisyP50: percentile(noisy, 50),
    };
  } finally {
    await engine.close();
    await engine.store.close();
    dir.remove();
  }
}

/** Each mode BENCH_RUNS times, alternating; medians per mode. */
export async function runFairBench(log: (line: string) => void): Promise<FairFigures[]> {
  const runs: FairFigures[] = [];
  for (let run = 1; run <= config.runs; run++) {
    for (const fair of [true, false]) {
      const f = await runOnce(fair);
      runs.push(f);
      log(
        `[fair] run ${run}/${config.runs} fair=${fair}: sent ${f.sent}, received ${f.received}, quiet dwell p50 ${f.quietP50} ms p99 ${f.quietP99} ms, noisy p50 ${f.noisyP50} ms`,
      );
    }
  }
  return [true, false].map((fair) => {
    const of = runs.filter((r) => r.fair === fair);
    const m = (k: keyof FairFigures) => median(of.map((r) => r[k] as number));
    return {
      fair,
      sent: m('sent'),
      received: m('received'),
      quietP50: m('quietP50'),
      quietP99: m('quietP99'),
      noisyP50: m('noisyP50'),
    };
  });
}

export function formatFair(figures: FairFigures[]): string {
  const rows = figures.map(
    (f) =>
      `| ${f.fair ? 'on' : 'off'} | ${Math.round(f.quietP50)} ms | ${Math.round(f.quietP99)} ms | ${Math.round(f.noisyP50)} ms | ${f.sent} | ${f.received} |`,
  );
  return [
    `Fair queues (${SECONDS} s, 1 noisy group × ${TICK_NOISY} + ${QUIET_GROUPS} quiet groups × 1 every ${TICK_MS} ms; ${CONSUMERS} consumers of 10 messages each ${WORK_MS} ms)`,
    '| fair queuing | quiet p50 dwell | quiet p99 dwell | noisy p50 dwell | sent | received |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows,
  ].join('\n');
}

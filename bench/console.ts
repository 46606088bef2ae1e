import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { recordDeath } from '../src/engine/dead-letters/deaths.js';
import { defaultAttributes } from '../src/engine/queues/queue-attributes.js';
import type { DeadLetterRule, Store } from '../src/engine/store/store.js';
import type { DeathReason, NewMessage, QueueRecord } from '../src/engine/kernel/types.js';
import { SqliteStore } from '../src/stores/sqlite/store.js';
import { config } from './config.js';
import { startServerProcess } from './processes.js';
import { nodeArgs, serveArgs, sqsCall, tempDataDir } from './targets.js';
import { newQueue } from '../src/engine/store/queues.js';

/**
 * The console's requests on a large account (BENCH_ONLY=console): the overview's
 * ListQueueSummaries over 1,000 queues, the first page of a 1,000,000-message
 * dead-letter queue (PeekMessages, plain and filtered) and its GetDeadLetterBreakdown.
 * The DLQ is filled through the store itself (sends of 5,000 messages a transaction,
 * then receives that dead-letter them, as a real source does), the other queues with
 * CreateQueue; then a real server on that data answers each request RUNS times in a
 * row, after WARMUP unmeasured ones, and the median is reported. SQLite store.
 */
const ACCOUNT = '000000000000';
const REGION = 'us-east-1';
const QUEUES = 1_000;
const WARMUP = 3;
const RUNS = 15;
const SEND_BATCH = 5_000;
const BODY_PAD = 'x'.repeat(200);

const arnOf = (name: string) => `arn:aws:sqs:${REGION}:${ACCOUNT}:${name}`;

async function makeQueue(store: Store, name: string, attributes: Record<string, string> = {}): Promise<QueueRecord> {
  const now = Date.now();
  return (
    await store.queues.create(
      newQueue(
        {
          accountId: ACCOUNT,
          region: REGION,
          name,
          fifo: false,
          attributes: { ...defaultAttributes(false), ...attributes },
        },
        now,
      ),
    )
  ).queue;
}

/** Sends `n` messages to `source` and dead-letters them into `dlq` with `reason`, through the store. */
async function deadLetter(
  store: Store,
  source: QueueRecord,
  dlq: QueueRecord,
  n: number,
  reason: DeathReason,
  log: (s: string) => void,
): Promise<void> {
  for (let sent = 0; sent < n; sent += SEND_BATCH) {
    const now = Date.now();
    const batch: NewMessage[] = Array.from({ length: Math.min(SEND_BATCH, n - sent) }, (_, i) => ({
      messageId: randomUUID(),
      body: `{"order":"A-${sent + i}","type":"${(sent + i) % 10 === 0 ? 'refund' : 'order'}","pad":"${BODY_PAD}"}`,
      md5OfBody: 'x',
      senderId: ACCOUNT,
      sentAt: now,
      visibleAt: now,
      receiveCount: 1,
    }));
    await store.messages.send(source.id, batch);
    const rule: DeadLetterRule = {
      queueId: dlq.id,
      reason,
      maxReceiveCount: 1,
      arrival: (m) => ({
        kind: 'move',
        sentAt: m.sentAt,
        deadLetterSourceArn: arnOf(source.name),
        deaths: recordDeath(m.deaths, { queue: source.name, queueArn: arnOf(source.name), reason, time: now }),
      }),
    };
    // Every message has been received once already, so each receive dead-letters instead of returning.
    while (
      (
        await store.messages.receive(source.id, {
          now,
          max: 1_000,
          visibilityTimeoutMs: 30_000,
          retentionCutoff: 0,
          newToken: randomUUID,
          deadLetter: rule,
        })
      ).deadLettered.length > 0
    );
    if ((sent / SEND_BATCH) % 40 === 0)
      log(`  filled ${(sent + batch.length).toLocaleString('en-US')} of ${n.toLocaleString('en-US')} (${source.name})`);
  }
}

export interface ConsoleFigure {
  request: string;
  medianMs: number;
  p90Ms: number;
  minMs: number;
}

async function time(url: string, action: string, body: object): Promise<ConsoleFigure['medianMs'][]> {
  const out: number[] = [];
  for (let i = 0; i < WARMUP + RUNS; i++) {
    const t = performance.now();
    await sqsCall(url, action, body);
    if (i >= WARMUP) out.push(performance.now() - t);
  }
  return out.sort((a, b) => a - b);
}

export async function runConsoleBench(log: (s: string) => void, messages = config.backlog): Promise<ConsoleFigure[]> {
  const data = tempDataDir();
  try {
    log(`[console] filling a dead-letter queue of ${messages.toLocaleString('en-US')} messages through the store`);
    const store = new SqliteStore({ path: join(data.dir, 'redrive.db'), durability: 'process' });
    const dlq = await makeQueue(store, 'big-dlq');
    const policy = JSON.stringify({ deadLetterTargetArn: arnOf('big-dlq'), maxReceiveCount: 5 });
    const a = await makeQueue(store, 'big-a', { RedrivePolicy: policy });
    const b = await makeQueue(store, 'big-b', { RedrivePolicy: policy });
    const started = performance.now();
    await deadLetter(store, a, dlq, Math.round(messages * 0.9), 'delivery_limit', log);
    await deadLetter(store, b, dlq, messages - Math.round(messages * 0.9), 'rejected', log);
    await store.close();
    log(`[console] filled in ${((performance.now() - started) / 1000).toFixed(1)} s`);

    const server = await startServerProcess(serveArgs('sqlite', data.dir, 'process'), nodeArgs());
    try {
      // The rest of the 1,000 queues: every tenth a DLQ, and seven of the nine after it its sources.
      const nameOf = (i: number) => `q-${String(i).padStart(4, '0')}`;
      for (let i = 3; i < QUEUES; i++) {
        const dlqIndex = i - (i % 10);
        const source = dlqIndex >= 10 && i % 10 >= 3;
        const Attributes = source
          ? { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arnOf(nameOf(dlqIndex)), maxReceiveCount: 3 }) }
          : undefined;
        await sqsCall(server.url, 'CreateQueue', { QueueName: nameOf(i), Attributes });
        if (i % 7 === 0)
          await sqsCall(server.url, 'SendMessage', {
            QueueUrl: `${server.url}/${ACCOUNT}/${nameOf(i)}`,
            MessageBody: 'hello',
          });
      }
      const QueueUrl = `${server.url}/${ACCOUNT}/big-dlq`;
      const summaries = (await sqsCall(server.url, 'ListQueueSummaries', { MaxResults: 1000 })) as {
        Queues: unknown[];
      };
      if (summaries.Queues.length !== QUEUES)
        throw new Error(`expected ${QUEUES} queues, got ${summaries.Queues.length}`);
      const requests: [string, string, object][] = [
        ['ListQueueSummaries, 1,000 queues', 'ListQueueSummaries', { MaxResults: 1000 }],
        ['PeekMessages, first page (25)', 'PeekMessages', { QueueUrl, MaxResults: 25 }],
        [
          'PeekMessages, filter matching 10% (DeathReason)',
          'PeekMessages',
          { QueueUrl, MaxResults: 25, Filter: { DeathReason: 'rejected' } },
        ],
        [
          'PeekMessages, filter matching none (1,000 examined)',
          'PeekMessages',
          { QueueUrl, MaxResults: 25, Filter: { BodyContains: 'no such text' } },
        ],
        ['GetDeadLetterBreakdown', 'GetDeadLetterBreakdown', { QueueUrl }],
        ['GetQueueActivity', 'GetQueueActivity', { QueueUrl }],
      ];
      const figures: ConsoleFigure[] = [];
      for (const [request, action, body] of requests) {
        const ms = await time(server.url, action, body);
        const f = {
          request,
          medianMs: ms[Math.floor(ms.length / 2)]!,
          p90Ms: ms[Math.floor(ms.length * 0.9)]!,
          minMs: ms[0]!,
        };
        figures.push(f);
        log(
          `[console] ${request.padEnd(52)} median ${f.medianMs.toFixed(1)} ms, p90 ${f.p90Ms.toFixed(1)} ms, min ${f.minMs.toFixed(1)} ms`,
        );
      }
      return figures;
    } finally {
      await server.stop();
    }
  } finally {
    data.remove();
  }
}

/** bench/results/console.json: the figures of the latest run, for docs/performance.md. */
export function writeConsoleResults(figures: ConsoleFigure[]): void {
  const file = fileURLToPath(new URL('../../bench/results/console.json', import.meta.url));
  writeFileSync(
    file,
    `${JSON.stringify({ at: new Date().toISOString(), messages: config.backlog, queues: QUEUES, runs: RUNS, figures }, null, 2)}\n`,
  );
  console.log(`wrote ${file}`);
}

// `node dist/bench/console.js` runs it alone (as `BENCH_ONLY=console npm run bench` does within the whole).
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  runConsoleBench((s) => console.log(s)).then(
    (figures) => {
      writeConsoleResults(figures);
      process.exit(0);
    },
    (e) => {
      console.error(e);
      process.exit(1);
    },
  );
}

/**
 * Soak: steady mixed load on one server while its memory (RSS), open file descriptors and
 * request latency are sampled; the last third of the run must not have grown or drifted
 * against the middle third (the first third is warm-up: caches and pools filling).
 *
 * Load: paced standard single and batch sends, long-poll receives that delete most
 * messages, release some (visibility 0) and abandon a few, so that some are dead-lettered
 * and consumed from the DLQ; FIFO sends and receives; a probe client timing one
 * SendMessage (then receiving and deleting it) about every 100 ms. Every acknowledged
 * send is accounted for at the end.
 *
 * CI: 2 minutes (sampled every 3 s). Manual:
 * REDRIVE_PROOF=long node dist/test/reliability/soak.test.js (30 minutes, sampled every
 * 10 s); REDRIVE_PROOF_SOAK_SECONDS=n sets the length.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { startServerProcess } from '../support/server-process.js';
import {
  arn,
  mean,
  must,
  peekAll,
  percentile,
  queueUrl,
  sampleProcess,
  setting,
  sleep,
  sqs,
  summary,
  type SqsAnswer,
} from './support.js';

const SECONDS = setting('soak_seconds', 120, 1800);
const SAMPLE_MS = setting('soak_sample_ms', 3_000, 10_000);

interface Sample {
  t: number;
  rssMb: number;
  fds: number;
  p50: number;
  p99: number;
  ops: number;
}

test(`soak: ${SECONDS} s of steady load, no growth in memory, descriptors or latency`, {
  timeout: (SECONDS + 120) * 1000,
}, async () => {
  const server = await startServerProcess({ storage: 'sqlite' });
  after(async () => {
    await server.kill();
    server.cleanup();
  });
  const base = server.url;
  const pid = server.proc.pid!;
  await must(base, 'CreateQueue', { QueueName: 'soak-dlq' });
  await must(base, 'CreateQueue', {
    QueueName: 'soak-work',
    Attributes: {
      VisibilityTimeout: '2',
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arn('soak-dlq'), maxReceiveCount: 2 }),
    },
  });
  await must(base, 'CreateQueue', {
    QueueName: 'soak.fifo',
    Attributes: { FifoQueue: 'true', ContentBasedDeduplication: 'true' },
  });
  await must(base, 'CreateQueue', { QueueName: 'soak-probe' });
  const WORK = queueUrl(base, 'soak-work');
  const DLQ = queueUrl(base, 'soak-dlq');
  const FIFO = queueUrl(base, 'soak.fifo');
  const PROBE = queueUrl(base, 'soak-probe');

  const acked = new Set<string>();
  const ids = new Map<string, Set<string>>();
  let sent = 0;
  let ops = 0;
  let failures = 0;
  let latencies: number[] = [];
  let stop = false;
  const random = (n: number) => Math.floor(Math.random() * n);
  const failureTypes = new Map<string, number>();
  const count = (status: number, type?: string) => {
    ops++;
    if (status === 200) return;
    failures++;
    failureTypes.set(`${status} ${type}`, (failureTypes.get(`${status} ${type}`) ?? 0) + 1);
  };

  const tallied = (a: SqsAnswer) => count(a.status, a.errorType ?? a.networkError);

  const producer = async (p: number, queue: string) => {
    for (let n = 0; !stop; n++) {
      const batch = random(4) === 0;
      const bodies = Array.from({ length: batch ? 5 : 1 }, (_, i) => `${p}-${n}-${i}`);
      sent += bodies.length;
      const fifo = queue === FIFO ? { MessageGroupId: `g${random(20)}` } : {};
      const a = batch
        ? await sqs<{ Successful?: { Id: string }[] }>(base, 'SendMessageBatch', {
            QueueUrl: queue,
            Entries: bodies.map((b, i) => ({ Id: `e${i}`, MessageBody: b, ...fifo })),
          })
        : await sqs(base, 'SendMessage', { QueueUrl: queue, MessageBody: bodies[0], ...fifo });
      count(a.status, a.errorType ?? a.networkError);
      if (a.status === 200) {
        if (batch)
          for (const s of (a.body as { Successful?: { Id: string }[] }).Successful ?? [])
            acked.add(bodies[Number(s.Id.slice(1))]!);
        else acked.add(bodies[0]!);
      }
      await sleep(8 + random(8));
    }
  };

  /** Receives from `queue`; deletes all but `keepPct` percent, of which half are released at once. */
  const consumer = async (queue: string, keepPct: number, whileTrue: () => boolean) => {
    while (whileTrue()) {
      const a = await sqs<{ Messages?: { MessageId: string; Body: string; ReceiptHandle: string }[] }>(
        base,
        'ReceiveMessage',
        {
          QueueUrl: queue,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 1,
        },
        10_000,
      );
      count(a.status, a.errorType ?? a.networkError);
      const msgs = a.body?.Messages ?? [];
      const del = [];
      for (const m of msgs) {
        let s = ids.get(m.Body);
        if (!s) ids.set(m.Body, (s = new Set()));
        s.add(m.MessageId);
        const r = random(100);
        if (r >= keepPct) del.push(m);
        else if (r < keepPct / 2)
          tallied(
            await sqs(base, 'ChangeMessageVisibility', {
              QueueUrl: queue,
              ReceiptHandle: m.ReceiptHandle,
              VisibilityTimeout: 0,
            }),
          );
      }
      if (del.length) {
        tallied(
          await sqs(base, 'DeleteMessageBatch', {
            QueueUrl: queue,
            Entries: del.map((m, i) => ({ Id: `d${i}`, ReceiptHandle: m.ReceiptHandle })),
          }),
        );
      }
    }
  };

  const probe = async () => {
    for (let n = 0; !stop; n++) {
      const a = await sqs(base, 'SendMessage', { QueueUrl: PROBE, MessageBody: `probe-${n}` });
      count(a.status, a.errorType ?? a.networkError);
      latencies.push(a.ms);
      const r = await sqs<{ Messages?: { ReceiptHandle: string }[] }>(base, 'ReceiveMessage', {
        QueueUrl: PROBE,
        MaxNumberOfMessages: 10,
      });
      count(r.status, r.errorType ?? r.networkError);
      for (const m of r.body?.Messages ?? [])
        tallied(await sqs(base, 'DeleteMessage', { QueueUrl: PROBE, ReceiptHandle: m.ReceiptHandle }));
      await sleep(100);
    }
  };

  const samples: Sample[] = [];
  const startedAt = Date.now();
  const running = () => !stop;
  const workers = [
    producer(0, WORK),
    producer(1, WORK),
    producer(2, WORK),
    producer(3, FIFO),
    consumer(WORK, 10, running),
    consumer(WORK, 10, running),
    consumer(WORK, 10, running),
    consumer(DLQ, 0, running),
    consumer(FIFO, 0, running),
    probe(),
  ];
  let lastOps = 0;
  while (Date.now() - startedAt < SECONDS * 1000) {
    await sleep(SAMPLE_MS);
    const p = sampleProcess(pid);
    const window = latencies;
    latencies = [];
    samples.push({
      t: Math.round((Date.now() - startedAt) / 1000),
      rssMb: p.rssKb / 1024,
      fds: p.fds,
      p50: percentile(window, 50),
      p99: percentile(window, 99),
      ops: (ops - lastOps) / (SAMPLE_MS / 1000),
    });
    lastOps = ops;
    const s = samples[samples.length - 1]!;
    console.log(
      `t=${s.t}s rss=${s.rssMb.toFixed(1)}MB fds=${s.fds} probe_p50=${s.p50.toFixed(1)}ms probe_p99=${s.p99.toFixed(1)}ms ops/s=${s.ops.toFixed(0)}`,
    );
  }
  stop = true;
  await Promise.all(workers);

  // Drain what is left, then account for every acknowledged send.
  let drained = false;
  const until = Date.now() + 30_000;
  const draining = () => !drained && Date.now() < until;
  const drainers = [consumer(WORK, 0, draining), consumer(DLQ, 0, draining), consumer(FIFO, 0, draining)];
  while (draining()) {
    await sleep(500);
    if ([...acked].every((b) => ids.has(b))) drained = true;
  }
  drained = true;
  await Promise.all(drainers);
  const present = new Set<string>();
  for (const q of ['soak-work', 'soak-dlq', 'soak.fifo']) for (const m of await peekAll(base, q)) present.add(m.Body);
  const lost = [...acked].filter((b) => !ids.has(b) && !present.has(b)).length;
  const duplicated = [...ids.values()].filter((s) => s.size > 1).length;
  const received = [...acked].filter((b) => ids.has(b)).length;

  const third = Math.floor(samples.length / 3);
  const middle = samples.slice(third, 2 * third);
  const last = samples.slice(2 * third);
  const stat = (xs: Sample[], k: keyof Sample) => mean(xs.map((s) => s[k]));
  const rssMid = stat(middle, 'rssMb');
  const rssLast = stat(last, 'rssMb');
  const fdsMid = Math.max(...middle.map((s) => s.fds));
  const fdsLast = Math.max(...last.map((s) => s.fds));
  const p50Mid = stat(middle, 'p50');
  const p50Last = stat(last, 'p50');
  const p99Mid = stat(middle, 'p99');
  const p99Last = stat(last, 'p99');
  // Least-squares slope of RSS after warm-up, for the record: MB per minute.
  const tail = samples.slice(third);
  const tMean = mean(tail.map((x) => x.t));
  const rMean = mean(tail.map((x) => x.rssMb));
  const slope =
    (tail.reduce((a, x) => a + (x.t - tMean) * (x.rssMb - rMean), 0) /
      tail.reduce((a, x) => a + (x.t - tMean) ** 2, 0)) *
    60;
  const line = summary('soak', {
    sent,
    acknowledged: acked.size,
    received,
    lost,
    duplicated,
    seconds: SECONDS,
    failed_requests: failures,
    operations: ops,
    samples: samples.length,
    rss_mid_mb: rssMid,
    rss_last_mb: rssLast,
    rss_slope_mb_per_min: slope,
    fds_mid_max: fdsMid,
    fds_last_max: fdsLast,
    probe_p50_mid_ms: p50Mid,
    probe_p50_last_ms: p50Last,
    probe_p99_mid_ms: p99Mid,
    probe_p99_last_ms: p99Last,
  });
  await server.stop();

  assert.ok(samples.length >= 6, `too few samples: ${line}`);
  assert.equal(lost, 0, 'acknowledged sends lost');
  assert.equal(duplicated, 0, 'duplicates without any crash');
  assert.equal(failures, 0, `requests failed under steady load: ${JSON.stringify(Object.fromEntries(failureTypes))}`);
  // Memory: the last third's mean within 20% (+16 MB for GC sawtooth) of the middle third's.
  assert.ok(rssLast <= rssMid * 1.2 + 16, `RSS grew: middle ${rssMid.toFixed(1)} MB, last ${rssLast.toFixed(1)} MB`);
  // Descriptors: sockets come and go, but no trend.
  assert.ok(fdsLast <= fdsMid + 10, `file descriptors grew: middle max ${fdsMid}, last max ${fdsLast}`);
  // Latency: generous, because CI runs other test files beside this one.
  assert.ok(p50Last <= p50Mid * 2 + 5, `probe p50 drifted: ${p50Mid.toFixed(1)} → ${p50Last.toFixed(1)} ms`);
  assert.ok(p99Last <= p99Mid * 3 + 25, `probe p99 drifted: ${p99Mid.toFixed(1)} → ${p99Last.toFixed(1)} ms`);
});

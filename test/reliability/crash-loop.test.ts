/**
 * Crash loop: SIGKILL the server at random moments under a mixed load, restart it on the
 * same data directory each time, and account for every message at the end.
 *
 * Load: standard single and batch sends, FIFO sends with deduplication ids, receives that
 * delete, release (visibility 0), extend (visibility change, then delete) or abandon what
 * they get, dead-lettering (maxReceiveCount 3), and a move task from the DLQ to a third
 * queue restarted every second or so. Producers are at-least-once clients: a send that got
 * no answer is retried with the same body (and, on FIFO, the same deduplication id) once
 * the server is back, and a few acknowledged FIFO sends are repeated on purpose.
 *
 * Claims checked: every acknowledged send was received or is still in a queue; no message
 * whose delete was acknowledged comes back; duplicates exist only where a producer retried
 * a standard send; the FIFO queue has none.
 *
 * CI: 20 kills. Manual: REDRIVE_PROOF=long node dist/test/reliability/crash-loop.test.js
 * (25 kills); REDRIVE_PROOF_KILLS=n sets the number, REDRIVE_PROOF_DURABILITY=power the mode,
 * and REDRIVE_TEST_STORAGE=postgres runs it against PostgreSQL (see test/support).
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { arn, must, peekAll, queueUrl, setting, sleep, sqs, summary } from './support.js';

const KILLS = setting('kills', 20, 25);
/** REDRIVE_PROOF_DURABILITY=power runs the loop with `--durability power`. */
const DURABILITY = process.env.REDRIVE_PROOF_DURABILITY ?? 'process';
const serverArgs = ['--durability', DURABILITY];
const WORK = 'crash-work';
const DLQ = 'crash-work-dlq';
const DEST = 'crash-work-dest';
const FIFO = 'crash-orders.fifo';
const VISIBILITY_S = 2;
const MAX_RECEIVES = 3;

interface Tracked {
  fifo: boolean;
  attempts: number;
  acked: boolean;
  /** Message ids it was received with (dead-lettering keeps the id). */
  ids: Set<string>;
  /** Message id → when its delete was acknowledged. */
  deleted: Map<string, number>;
}

test(`crash loop: ${KILLS} SIGKILLs under mixed load lose nothing acknowledged`, {
  timeout: (KILLS * 8 + 90) * 1000,
}, async () => {
  const first = await startServerProcess({ storage: 'sqlite', args: serverArgs });
  const dataDir = first.dataDir;
  let server: ServerProcess = first;
  after(async () => {
    await server.kill(); // a no-op when it has already stopped
    first.cleanup();
  });
  let base = server.url;
  const startedAt = Date.now();

  await must(base, 'CreateQueue', { QueueName: DLQ });
  await must(base, 'CreateQueue', { QueueName: DEST });
  await must(base, 'CreateQueue', {
    QueueName: WORK,
    Attributes: {
      VisibilityTimeout: String(VISIBILITY_S),
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arn(DLQ), maxReceiveCount: MAX_RECEIVES }),
    },
  });
  await must(base, 'CreateQueue', {
    QueueName: FIFO,
    Attributes: { FifoQueue: 'true', VisibilityTimeout: String(VISIBILITY_S) },
  });

  const tracked = new Map<string, Tracked>();
  const track = (body: string, fifo: boolean) => {
    let t = tracked.get(body);
    if (!t) tracked.set(body, (t = { fifo, attempts: 0, acked: false, ids: new Set(), deleted: new Map() }));
    return t;
  };
  let resurrected = 0;
  let stopLoad = false;
  let ops = 0;
  let moveTasksStarted = 0;
  const random = (n: number) => Math.floor(Math.random() * n);
  const errors = new Map<string, number>();
  const rest = (status: number, errorType?: string) => {
    if (status !== 0 && status !== 200)
      errors.set(`${status}:${errorType}`, (errors.get(`${status}:${errorType}`) ?? 0) + 1);
    return status === 0 ? sleep(50) : status >= 500 ? sleep(20) : Promise.resolve();
  };
  let loadStoppedAt = Infinity;
  let abandonedSends = 0;

  const producer = async (p: number, fifo: boolean) => {
    const pending: string[] = [];
    let n = 0;
    // After the load stops, a producer keeps retrying what was never answered.
    while (!stopLoad || pending.length > 0) {
      if (performance.now() - loadStoppedAt > 30_000) {
        abandonedSends += pending.length; // never acknowledged: they count as sent, not acknowledged
        break;
      }
      let bodies = pending.splice(0, 10);
      if (bodies.length === 0) {
        const count = random(3) === 0 ? 1 + random(9) : 1; // room for a repeat: at most 10 entries
        bodies = Array.from({ length: count }, () => `${fifo ? 'f' : 's'}${p}-${n++}`);
        // A deliberate repeat of an acknowledged FIFO send: deduplication must drop it.
        if (fifo && n > 20 && random(20) === 0) bodies.push(`f${p}-${random(n - 10)}`);
      }
      const url = queueUrl(base, fifo ? FIFO : WORK);
      const extra = (b: string) => (fifo ? { MessageGroupId: `g${random(8)}`, MessageDeduplicationId: b } : {});
      bodies.forEach((b) => track(b, fifo).attempts++);
      ops++;
      if (bodies.length === 1) {
        const a = await sqs(base, 'SendMessage', { QueueUrl: url, MessageBody: bodies[0], ...extra(bodies[0]!) });
        if (a.status === 200) track(bodies[0]!, fifo).acked = true;
        else pending.push(bodies[0]!);
        await rest(a.status, a.errorType);
      } else {
        const a = await sqs<{ Successful?: { Id: string }[] }>(base, 'SendMessageBatch', {
          QueueUrl: url,
          Entries: bodies.map((b, i) => ({ Id: `e${i}`, MessageBody: b, ...extra(b) })),
        });
        const ok = new Set((a.body?.Successful ?? []).map((s) => Number(s.Id.slice(1))));
        bodies.forEach((b, i) => (a.status === 200 && ok.has(i) ? (track(b, fifo).acked = true) : pending.push(b)));
        await rest(a.status, a.errorType);
      }
      // Paced so that consumers keep up: released messages must come round again and die.
      if (!stopLoad) await sleep(5 + random(20));
    }
  };

  const seen = (body: string, id: string, requestStart: number) => {
    const t = tracked.get(body);
    if (!t) throw new Error(`received a body nobody sent: ${body}`);
    t.ids.add(id);
    const at = t.deleted.get(id);
    // Received by a request that started after this very message's delete was acknowledged.
    if (at !== undefined && at < requestStart) resurrected++;
  };

  const deleteBatch = async (url: string, msgs: { MessageId: string; Body: string; ReceiptHandle: string }[]) => {
    if (msgs.length === 0) return;
    ops++;
    const a = await sqs<{ Successful?: { Id: string }[] }>(base, 'DeleteMessageBatch', {
      QueueUrl: url,
      Entries: msgs.map((m, i) => ({ Id: `d${i}`, ReceiptHandle: m.ReceiptHandle })),
    });
    if (a.status !== 200) return;
    const now = performance.now();
    for (const s of a.body?.Successful ?? []) {
      const m = msgs[Number(s.Id.slice(1))]!;
      tracked.get(m.Body)!.deleted.set(m.MessageId, now);
    }
  };

  const consumer = async (fifo: boolean) => {
    while (!stopLoad) {
      const url = queueUrl(base, fifo ? FIFO : WORK);
      const requestStart = performance.now();
      ops++;
      const a = await sqs<{ Messages?: { MessageId: string; Body: string; ReceiptHandle: string }[] }>(
        base,
        'ReceiveMessage',
        {
          QueueUrl: url,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 1,
        },
        5_000,
      );
      if (a.status !== 200) {
        await rest(a.status, a.errorType);
        continue;
      }
      const msgs = a.body?.Messages ?? [];
      msgs.forEach((m) => seen(m.Body, m.MessageId, requestStart));
      const toDelete: typeof msgs = [];
      const extended: typeof msgs = [];
      for (const m of msgs) {
        const r = random(100);
        if (fifo) {
          if (r < 90) toDelete.push(m);
          continue;
        }
        if (r < 55) toDelete.push(m);
        else if (r < 70) {
          ops++;
          await sqs(base, 'ChangeMessageVisibility', {
            QueueUrl: url,
            ReceiptHandle: m.ReceiptHandle,
            VisibilityTimeout: 0,
          });
        } else if (r < 80) extended.push(m);
        // else: abandoned; it comes back after the visibility timeout.
      }
      // Only delete well inside the visibility window, so an acknowledged delete really
      // removed the message (a stale handle on a standard queue also "succeeds").
      if (performance.now() - requestStart < VISIBILITY_S * 750) await deleteBatch(url, toDelete);
      if (extended.length) {
        const cmvStart = performance.now();
        ops++;
        const c = await sqs(base, 'ChangeMessageVisibilityBatch', {
          QueueUrl: url,
          Entries: extended.map((m, i) => ({ Id: `v${i}`, ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 4 })),
        });
        await sleep(100);
        if (c.status === 200 && performance.now() - cmvStart < 3_000) await deleteBatch(url, extended);
      }
    }
  };

  const mover = async () => {
    while (!stopLoad) {
      await sleep(1_000);
      ops++;
      const a = await sqs(base, 'StartMessageMoveTask', {
        SourceArn: arn(DLQ),
        DestinationArn: arn(DEST),
        MaxNumberOfMessagesPerSecond: 100,
      });
      if (a.status === 200) moveTasksStarted++;
    }
  };

  const workers = [
    ...[0, 1, 2].map((p) => producer(p, false)),
    producer(3, true),
    ...[0, 1, 2].map(() => consumer(false)),
    consumer(true),
    consumer(true),
    mover(),
  ];
  const minBetween = 1_000;
  const maxBetween = 3_500;
  for (let k = 1; k <= KILLS; k++) {
    await sleep(minBetween + random(maxBetween - minBetween));
    const acked = [...tracked.values()].filter((t) => t.acked).length;
    await server.kill();
    console.log(
      `kill ${k}/${KILLS} at ${((Date.now() - startedAt) / 1000).toFixed(1)}s: ${acked} sends acknowledged, ${ops} operations so far`,
    );
    server = await startServerProcess({ storage: 'sqlite', dataDir, args: serverArgs });
    base = server.url;
  }
  await sleep(1_000);
  stopLoad = true;
  loadStoppedAt = performance.now();
  await Promise.all(workers);

  // Nothing moves while we count: stop the move task and wait until it says so.
  for (let i = 0; ; i++) {
    assert.ok(i < 100, 'the move task did not stop when cancelled');
    const { Results = [] } = await must<{ Results?: { Status: string; TaskHandle?: string }[] }>(
      base,
      'ListMessageMoveTasks',
      { SourceArn: arn(DLQ) },
    );
    const running = Results.find((r) => r.Status === 'RUNNING');
    if (!running) break;
    await sqs(base, 'CancelMessageMoveTask', { TaskHandle: running.TaskHandle });
    await sleep(100);
  }

  const finalCopies = new Map<string, number>();
  let deadLettered = 0;
  let moved = 0;
  const perQueue: string[] = [];
  for (const name of [WORK, DLQ, DEST, FIFO]) {
    const messages = await peekAll(base, name);
    perQueue.push(`${name}=${messages.length}`);
    for (const m of messages) {
      const t = tracked.get(m.Body);
      assert.ok(t, `a message nobody sent is in ${name}: ${m.Body}`);
      finalCopies.set(m.Body, (finalCopies.get(m.Body) ?? 0) + 1);
      if (name === DEST) {
        moved++;
        // A moved message gets a new id; if its only known copy was deleted, the delete came back.
        if (t.ids.size === 1 && t.deleted.size === 1) resurrected++;
      } else {
        if (t.deleted.has(m.MessageId)) resurrected++;
        t.ids.add(m.MessageId);
        if (name === DLQ) deadLettered++;
      }
    }
  }

  console.log(`left in queues: ${perQueue.join(' ')}; error answers: ${JSON.stringify(Object.fromEntries(errors))}`);
  let acknowledged = 0;
  let received = 0;
  let lost = 0;
  let duplicated = 0;
  let fifoDuplicated = 0;
  let unexplained = 0;
  let retried = 0;
  let stillQueued = 0;
  const lostBodies: string[] = [];
  for (const [body, t] of tracked) {
    if (!t.acked) continue;
    acknowledged++;
    const present = finalCopies.get(body) ?? 0;
    if (t.attempts > 1) retried++;
    if (present > 0) stillQueued++;
    if (t.ids.size > 0 || present > 0) received++;
    else {
      lost++;
      lostBodies.push(body);
    }
    if (t.ids.size > 1 || present > 1) {
      duplicated++;
      if (t.fifo) fifoDuplicated++;
      else if (t.attempts === 1) unexplained++;
    }
  }
  const line = summary('crash-loop', {
    sent: tracked.size,
    acknowledged,
    received,
    lost,
    duplicated,
    fifo_duplicated: fifoDuplicated,
    kills: KILLS,
    storage: process.env.REDRIVE_TEST_STORAGE === 'postgres' ? 'postgres' : 'sqlite',
    durability: DURABILITY,
    unexplained_duplicates: unexplained,
    resurrected,
    retried,
    unanswered_at_end: abandonedSends,
    still_queued: stillQueued,
    dead_lettered: deadLettered + moved,
    moved,
    move_tasks: moveTasksStarted,
    operations: ops,
    seconds: Math.round((Date.now() - startedAt) / 1000),
  });
  await server.stop();

  assert.ok(acknowledged > KILLS * 100, `too little load to prove anything: ${line}`);
  assert.equal(lost, 0, `acknowledged sends lost: ${lostBodies.slice(0, 20).join(', ')}`);
  assert.equal(resurrected, 0, 'messages whose delete was acknowledged came back');
  assert.equal(fifoDuplicated, 0, 'the FIFO queue with deduplication ids delivered duplicates');
  assert.equal(unexplained, 0, 'standard messages sent once exist more than once');
  assert.ok(deadLettered + moved > 0, 'the load dead-lettered nothing');
});

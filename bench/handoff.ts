import { isMainThread, parentPort, Worker } from 'node:worker_threads';
import type { ToOwner, ToThread } from '../src/server/threads/messages.js';
import { markdown } from './report.js';
import { median } from './stats.js';

/**
 * The `--threads` hand-off alone (docs/scaling.md, *Measured*): this thread plays an HTTP
 * thread and posts batches of SendMessage calls, in the shapes of
 * src/server/threads/messages.ts; a worker plays the owner and answers each batch with
 * one `done` per call. Nothing else runs, so the CPU per call is the hand-off's: copying
 * (structured cloning) both ways and waking the other thread, which in the server happens
 * about once per batch each way. Medians of 5 rounds per batch size.
 *
 *   npx tsc && node dist/bench/handoff.js
 */
const CALLS = 20_000;
const ROUNDS = 5;
const SIZES = [1, 4, 16, 64];

const call = (id: number): ToOwner => ({
  t: 'call',
  id,
  ctx: {
    accountId: '000000000000',
    region: 'us-east-1',
    baseUrl: 'http://127.0.0.1:9324',
    requestId: '6f1c2a9e-8a5b-4f4e-9d7c-0b1e2d3c4f5a',
    protocol: 'json',
  },
  action: 'SendMessage',
  input: { QueueUrl: 'http://127.0.0.1:9324/000000000000/orders', MessageBody: 'x'.repeat(256) },
});

const done = (id: number): ToThread => ({
  t: 'done',
  id,
  output: {
    MessageId: '0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9',
    MD5OfMessageBody: 'f1d3ff8443297732862df21dc4e57262',
  },
});

/** One round: CALLS calls in batches of `size`, one batch in flight; wall and process CPU µs per call. */
function round(owner: Worker, size: number): Promise<{ wall: number; cpu: number }> {
  const batches = Math.ceil(CALLS / size);
  const batch = Array.from({ length: size }, (_, i) => call(i));
  return new Promise((resolve) => {
    let answered = 0;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const onAnswer = () => {
      if (++answered < batches) return owner.postMessage(batch);
      owner.off('message', onAnswer);
      const cpu = process.cpuUsage(cpu0);
      const calls = batches * size;
      resolve({ wall: ((performance.now() - t0) * 1000) / calls, cpu: (cpu.user + cpu.system) / calls });
    };
    owner.on('message', onAnswer);
    owner.postMessage(batch);
  });
}

async function main(): Promise<void> {
  const owner = new Worker(new URL(import.meta.url));
  await round(owner, 16); // warm-up: both isolates compile the paths
  const rows: string[][] = [];
  for (const size of SIZES) {
    const runs: { wall: number; cpu: number }[] = [];
    for (let r = 0; r < ROUNDS; r++) runs.push(await round(owner, size));
    rows.push([String(size), median(runs.map((x) => x.cpu)).toFixed(1), median(runs.map((x) => x.wall)).toFixed(1)]);
  }
  await owner.terminate();
  console.log(
    `The --threads hand-off alone: ${CALLS} SendMessage calls and their answers between two threads, one batch in flight (process CPU of both threads; medians of ${ROUNDS} rounds)\n\n${markdown(
      ['calls a batch', 'CPU µs a call', 'wall µs a call'],
      rows,
    )}`,
  );
}

if (isMainThread) await main();
else
  parentPort!.on('message', (batch: Extract<ToOwner, { t: 'call' }>[]) =>
    parentPort!.postMessage(batch.map((c) => done(c.id))),
  );

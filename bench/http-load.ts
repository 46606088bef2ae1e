import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import type { LoadSpec } from './protocol.js';
import { Pacer, stampedBody, stampOf, type Window } from './window.js';

/**
 * HTTP workloads against Redrive (or the canned server), with a raw undici client:
 * no SDK, no signing, no retries, so the client spends as little CPU as it can and
 * the figures describe the server.
 */
const BATCH = 10;

export class SqsClient {
  private readonly pool: Pool;

  constructor(origin: string, connections: number) {
    // pipelining 1: one request at a time per connection, as SQS clients do.
    this.pool = new Pool(origin, {
      connections,
      pipelining: 1,
      keepAliveTimeout: 60_000,
      headersTimeout: 15_000,
      bodyTimeout: 15_000,
    });
  }

  async call(action: string, body: string): Promise<string> {
    const res = await this.pool.request({
      method: 'POST',
      path: '/',
      body,
      headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': `AmazonSQS.${action}` },
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`${action} → ${res.statusCode} ${text.slice(0, 200)}`);
    return text;
  }

  close(): Promise<void> {
    return this.pool.destroy();
  }
}

/**
 * Connections spread over every node (several servers on one Postgres database): loop
 * `i` always uses node `i mod n`, so each node carries an even share of the load.
 */
class Nodes {
  private readonly clients: SqsClient[];

  constructor(spec: LoadSpec, connections: number, side?: 'producers' | 'consumers') {
    const all = spec.targets?.length ? spec.targets : [spec.target];
    const origins = !spec.crossNodes || all.length < 2 ? all : side === 'producers' ? all.slice(0, 1) : all.slice(1);
    this.clients = origins.map(
      (o, i) =>
        new SqsClient(
          o,
          Math.max(1, Math.floor(connections / origins.length) + (i < connections % origins.length ? 1 : 0)),
        ),
    );
  }

  of(loop: number): SqsClient {
    return this.clients[loop % this.clients.length]!;
  }

  async close(): Promise<void> {
    await Promise.all(this.clients.map((c) => c.close()));
  }
}

function sendBody(queue: string, body: string): string {
  return JSON.stringify({ QueueUrl: queue, MessageBody: body });
}

function batchBody(queue: string, bodies: () => string, size = BATCH): string {
  return JSON.stringify({
    QueueUrl: queue,
    Entries: Array.from({ length: size }, (_, i) => ({ Id: `m${i}`, MessageBody: bodies() })),
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `n` concurrent loops of `once`, each until the window closes; a failed request is counted, not fatal. */
export async function loops(n: number, w: Window, once: (loop: number) => Promise<void>): Promise<void> {
  await Promise.all(
    Array.from({ length: n }, async (_, loop) => {
      while (w.running) {
        try {
          await once(loop);
        } catch (e) {
          w.error(e);
          // Back off briefly so a dead server cannot turn this into a hot error loop.
          await sleep(10);
        }
      }
    }),
  );
}

/** W1/W2: flat-out sends of one identical message, or one identical batch of ten; the latency is each request's. */
export async function runSends(spec: LoadSpec, w: Window): Promise<void> {
  const client = new Nodes(spec, spec.producers);
  const filler = 'x'.repeat(spec.bodyBytes);
  const batched = spec.kind === 'batch';
  // Built once: the client should cost as little as possible per request.
  const body = batched ? batchBody(spec.queue, () => filler) : sendBody(spec.queue, filler);
  const action = batched ? 'SendMessageBatch' : 'SendMessage';
  try {
    await loops(spec.producers, w, async (loop) => {
      const start = performance.now();
      await client.of(loop).call(action, body);
      // The request's round trip: the latency of an acknowledged send (W1's p99).
      w.latency(performance.now() - start);
      w.count(batched ? BATCH : 1);
    });
  } finally {
    await client.close();
  }
}

interface Received {
  Messages?: { ReceiptHandle: string; Body: string }[];
}

/**
 * W3/W3b/W5: producers send time-stamped messages (singly or in batches of ten) while
 * consumers long-poll for up to ten and delete them in one batch. Producers and
 * consumers have their own connection pools, so a waiting long poll never holds up a send.
 * W5 (`fifo-cycle`) sends single messages to a FIFO queue, each to a random one of
 * `groups` message groups with a unique deduplication id.
 */
export async function runCycle(spec: LoadSpec, w: Window): Promise<void> {
  const producers = new Nodes(spec, spec.producers, 'producers');
  const consumers = new Nodes(spec, spec.consumers, 'consumers');
  const batched = spec.kind === 'cycle-batch';
  const fifo = spec.kind === 'fifo-cycle';
  const groups = spec.groups ?? 100;
  let dedup = 0;
  const dedupPrefix = `${process.pid}-${Date.now()}-`;
  const perSend = batched ? BATCH : 1;
  const action = batched ? 'SendMessageBatch' : 'SendMessage';
  // With a target rate, all senders share one pacer that hands out evenly spaced slots.
  const pacer = spec.rate ? new Pacer((1000 * perSend) / spec.rate) : undefined;
  const receiveBody = JSON.stringify({ QueueUrl: spec.queue, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 });
  const stamp = () => stampedBody(spec.bodyBytes);
  const body = (): string => {
    if (batched) return batchBody(spec.queue, stamp);
    if (!fifo) return sendBody(spec.queue, stamp());
    return JSON.stringify({
      QueueUrl: spec.queue,
      MessageBody: stamp(),
      MessageGroupId: `g${Math.floor(Math.random() * groups)}`,
      MessageDeduplicationId: `${dedupPrefix}${dedup++}`,
    });
  };
  try {
    const produce = loops(spec.producers, w, async (loop) => {
      await pacer?.wait();
      if (!w.running) return;
      await producers.of(loop).call(action, body());
      w.count(perSend);
    });
    const consume = loops(spec.consumers, w, async (loop) => {
      const n = await receiveAndDelete(consumers.of(loop), spec.queue, receiveBody, w, true);
      if (n > 0) w.count(0, n);
    });
    await Promise.all([produce, consume]);
  } finally {
    await Promise.all([producers.close(), consumers.close()]);
  }
}

/** One ReceiveMessage, then one DeleteMessageBatch of what it got; returns how many were deleted. */
async function receiveAndDelete(
  client: SqsClient,
  queue: string,
  receiveBody: string,
  w: Window,
  latency: boolean,
): Promise<number> {
  const got = JSON.parse(await client.call('ReceiveMessage', receiveBody)) as Received;
  const messages = got.Messages ?? [];
  w.count(0);
  w.received(messages.length);
  if (messages.length === 0) return 0;
  if (latency) {
    const now = performance.now();
    for (const m of messages) w.latency(now - stampOf(m.Body));
  }
  const entries = messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle }));
  const deleted = JSON.parse(
    await client.call('DeleteMessageBatch', JSON.stringify({ QueueUrl: queue, Entries: entries })),
  );
  if (deleted.Failed?.length) throw new Error(`DeleteMessageBatch failed: ${JSON.stringify(deleted.Failed[0])}`);
  return messages.length;
}

/**
 * W4, first half: puts `total` messages in the queue as fast as it can, with
 * SendMessageBatch of ten on `producers` connections. The window closes when the last
 * batch is acknowledged; a failed batch is sent again.
 */
export async function runPreload(spec: LoadSpec, w: Window): Promise<void> {
  const total = spec.total ?? 0;
  const producers = new Nodes(spec, spec.producers);
  const filler = 'x'.repeat(spec.bodyBytes);
  const full = batchBody(spec.queue, () => filler);
  let issued = 0;
  let done = 0;
  await w.opened;
  try {
    await Promise.all(
      Array.from({ length: spec.producers }, async (_, loop) => {
        while (w.running && issued < total) {
          const n = Math.min(BATCH, total - issued);
          issued += n;
          try {
            const res = await producers
              .of(loop)
              .call('SendMessageBatch', n === BATCH ? full : batchBody(spec.queue, () => filler, n));
            if (res.includes('"Failed"')) throw new Error(`SendMessageBatch failed: ${res.slice(0, 300)}`);
            done += n;
            w.count(n);
          } catch (e) {
            issued -= n;
            w.error(e);
            await sleep(10);
          }
        }
      }),
    );
    w.complete = done >= total;
    w.stop();
  } finally {
    await producers.close();
  }
}

/**
 * W4, second half: `consumers` connections loop ReceiveMessage(10) + DeleteMessageBatch
 * until `total` messages are deleted (or the window's limit passes).
 */
export async function runDrain(spec: LoadSpec, w: Window): Promise<void> {
  const total = spec.total ?? 0;
  const consumers = new Nodes(spec, spec.consumers);
  const receiveBody = JSON.stringify({ QueueUrl: spec.queue, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 });
  await w.opened;
  try {
    await loops(spec.consumers, w, async (loop) => {
      const n = await receiveAndDelete(consumers.of(loop), spec.queue, receiveBody, w, false);
      if (n > 0) w.count(0, n);
      if (w.consumedSoFar >= total) {
        w.complete = true;
        w.stop();
      }
    });
  } finally {
    await consumers.close();
  }
}

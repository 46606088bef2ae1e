import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import type { LoadSpec } from './protocol.js';
import { Pacer, stampedBody, stampOf, Window } from './window.js';

/**
 * HTTP workloads against Redrive (or the canned server), with a raw undici client:
 * no SDK, no signing, no retries, so the client spends as little CPU as it can and
 * the figures describe the server.
 */
const BATCH = 10;

class SqsClient {
  private readonly pool: Pool;

  constructor(origin: string, connections: number) {
    // pipelining 1: one request at a time per connection, as SQS clients do.
    this.pool = new Pool(origin, {
      connections, pipelining: 1, keepAliveTimeout: 60_000, headersTimeout: 15_000, bodyTimeout: 15_000,
    });
  }

  async call(action: string, body: string): Promise<string> {
    const res = await this.pool.request({
      method: 'POST', path: '/', body,
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

function sendBody(queue: string, body: string): string {
  return JSON.stringify({ QueueUrl: queue, MessageBody: body });
}

function batchBody(queue: string, bodies: () => string): string {
  return JSON.stringify({ QueueUrl: queue, Entries: Array.from({ length: BATCH }, (_, i) => ({ Id: `m${i}`, MessageBody: bodies() })) });
}

/** `n` concurrent loops of `once`, each until the window closes; a failed request is counted, not fatal. */
async function loops(n: number, w: Window, once: () => Promise<void>): Promise<void> {
  await Promise.all(Array.from({ length: n }, async () => {
    while (w.running) {
      try {
        await once();
      } catch (e) {
        w.error(e);
        // Back off briefly so a dead server cannot turn this into a hot error loop.
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
  }));
}

/** W1/W2: flat-out sends of one identical message, or one identical batch of ten. */
export async function runSends(spec: LoadSpec, w: Window): Promise<void> {
  const client = new SqsClient(spec.target, spec.producers);
  const filler = 'x'.repeat(spec.bodyBytes);
  const batched = spec.kind === 'batch';
  // Built once: the client should cost as little as possible per request.
  const body = batched ? batchBody(spec.queue, () => filler) : sendBody(spec.queue, filler);
  const action = batched ? 'SendMessageBatch' : 'SendMessage';
  try {
    await loops(spec.producers, w, async () => {
      await client.call(action, body);
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
 * W3/W3b: producers send time-stamped messages (singly or in batches of ten) while
 * consumers long-poll for up to ten and delete them in one batch. Producers and
 * consumers have their own connection pools, so a waiting long poll never holds up a send.
 */
export async function runCycle(spec: LoadSpec, w: Window): Promise<void> {
  const producers = new SqsClient(spec.target, spec.producers);
  const consumers = new SqsClient(spec.target, spec.consumers);
  const batched = spec.kind === 'cycle-batch';
  const perSend = batched ? BATCH : 1;
  const action = batched ? 'SendMessageBatch' : 'SendMessage';
  // With a target rate, all senders share one pacer that hands out evenly spaced slots.
  const pacer = spec.rate ? new Pacer((1000 * perSend) / spec.rate) : undefined;
  const receiveBody = JSON.stringify({ QueueUrl: spec.queue, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 });
  try {
    const produce = loops(spec.producers, w, async () => {
      await pacer?.wait();
      if (!w.running) return;
      const stamp = () => stampedBody(spec.bodyBytes);
      await producers.call(action, batched ? batchBody(spec.queue, stamp) : sendBody(spec.queue, stamp()));
      w.count(perSend);
    });
    const consume = loops(spec.consumers, w, async () => {
      const got = JSON.parse(await consumers.call('ReceiveMessage', receiveBody)) as Received;
      const messages = got.Messages ?? [];
      w.count(0);
      if (messages.length === 0) return;
      const now = performance.now();
      for (const m of messages) w.latency(now - stampOf(m.Body));
      const entries = messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle }));
      const deleted = JSON.parse(await consumers.call('DeleteMessageBatch', JSON.stringify({ QueueUrl: spec.queue, Entries: entries })));
      if (deleted.Failed?.length) throw new Error(`DeleteMessageBatch failed: ${JSON.stringify(deleted.Failed[0])}`);
      w.count(0, messages.length);
    });
    await Promise.all([produce, consume]);
  } finally {
    await Promise.all([producers.close(), consumers.close()]);
  }
}

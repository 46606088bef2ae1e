/**
 * Three Redrive server processes on one PostgreSQL database, driven through all of them
 * with the AWS SDK: producers and consumers on every node, standard and FIFO queues.
 */
import assert from 'node:assert/strict';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { after, before, describe, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../support/postgres.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

const ACCOUNT = '000000000000';

describe('three nodes on one PostgreSQL database', () => {
  let db: TestDatabase;
  let nodes: ServerProcess[] = [];
  let clients: SQSClient[] = [];
  const urlOn = (i: number, queue: string) => `${nodes[i]!.url}/${ACCOUNT}/${queue}`;

  before(async () => {
    db = await createTestDatabase();
    // Started together: their migrations race for the advisory lock.
    nodes = await Promise.all([0, 1, 2].map(() => startServerProcess({ storage: db.url })));
    clients = nodes.map((n) => n.client());
  });

  after(async () => {
    await Promise.all(nodes.map((n) => n.stop()));
    nodes.forEach((n) => n.cleanup());
    await db.drop();
  });

  test('standard: every message sent through any node is received exactly once and nothing is lost', async () => {
    await clients[0]!.send(new CreateQueueCommand({ QueueName: 'std', Attributes: { VisibilityTimeout: '60' } }));
    const perProducer = 400;
    const sent = new Set<string>();
    const received = new Map<string, number>();
    let producing = 3;
    const produce = async (p: number) => {
      // A producer that fails still counts down, so the consumers end and the failure is seen
      // (rather than the consumers polling for ever).
      try {
        for (let i = 0; i < perProducer; i += 10) {
          const entries = Array.from({ length: 10 }, (_, j) => ({ Id: `e${j}`, MessageBody: `p${p}-${i + j}` }));
          const out = await clients[p]!.send(
            new SendMessageBatchCommand({ QueueUrl: urlOn(p, 'std'), Entries: entries }),
          );
          assert.equal(out.Successful?.length, 10);
          entries.forEach((e) => sent.add(e.MessageBody));
        }
      } finally {
        producing--;
      }
    };
    const consume = async (node: number) => {
      for (;;) {
        const out = await clients[node]!.send(
          new ReceiveMessageCommand({ QueueUrl: urlOn(node, 'std'), MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
        );
        const msgs = out.Messages ?? [];
        if (msgs.length === 0 && producing === 0) return;
        for (const m of msgs) received.set(m.Body!, (received.get(m.Body!) ?? 0) + 1);
        if (msgs.length) {
          const del = await clients[node]!.send(
            new DeleteMessageBatchCommand({
              QueueUrl: urlOn(node, 'std'),
              Entries: msgs.map((m, j) => ({ Id: `d${j}`, ReceiptHandle: m.ReceiptHandle! })),
            }),
          );
          assert.equal(del.Successful?.length, msgs.length);
        }
      }
    };
    await Promise.all([0, 1, 2].map(produce).concat([0, 1, 2, 0, 1, 2].map(consume)));
    assert.equal(sent.size, 3 * perProducer);
    const twice = [...received].filter(([, n]) => n > 1);
    assert.deepEqual(twice, [], 'no message was handed to two consumers within its visibility timeout');
    assert.deepEqual(
      [...sent].filter((b) => !received.has(b)),
      [],
      'every acknowledged send was received',
    );
  });

  test('FIFO: each group is held by one consumer at a time and delivered in order', async () => {
    await clients[0]!.send(
      new CreateQueueCommand({
        QueueName: 'orders.fifo',
        Attributes: { FifoQueue: 'true', ContentBasedDeduplication: 'true', VisibilityTimeout: '60' },
      }),
    );
    const groups = 12;
    const perGroup = 40;
    // Each group's messages are sent in order, one after another, each through the next node.
    const produce = async (g: number) => {
      for (let i = 0; i < perGroup; i++) {
        const node = (g + i) % 3;
        await clients[node]!.send(
          new SendMessageCommand({
            QueueUrl: urlOn(node, 'orders.fifo'),
            MessageBody: `g${g}:${i}`,
            MessageGroupId: `g${g}`,
          }),
        );
      }
    };
    const seen = new Map<string, number[]>();
    /** Per group: when a consumer got it and when it started giving it back (its delete). */
    const holds = new Map<string, { got: number; released: number; consumer: number }[]>();
    let remaining = groups * perGroup;
    const consume = async (consumer: number) => {
      const node = consumer % 3;
      while (remaining > 0) {
        const out = await clients[node]!.send(
          new ReceiveMessageCommand({
            QueueUrl: urlOn(node, 'orders.fifo'),
            MaxNumberOfMessages: 10,
            WaitTimeSeconds: 1,
            MessageSystemAttributeNames: ['MessageGroupId'],
          }),
        );
        const msgs = out.Messages ?? [];
        if (msgs.length === 0) continue;
        const got = performance.now();
        for (const m of msgs) {
          const [g, i] = m.Body!.split(':') as [string, string];
          seen.set(g, [...(seen.get(g) ?? []), Number(i)]);
        }
        await new Promise((r) => setTimeout(r, Math.random() * 5)); // "work"
        const released = performance.now();
        for (const g of new Set(msgs.map((m) => m.Attributes!.MessageGroupId!))) {
          holds.set(g, [...(holds.get(g) ?? []), { got, released, consumer }]);
        }
        const del = await clients[node]!.send(
          new DeleteMessageBatchCommand({
            QueueUrl: urlOn(node, 'orders.fifo'),
            Entries: msgs.map((m, j) => ({ Id: `d${j}`, ReceiptHandle: m.ReceiptHandle! })),
          }),
        );
        assert.equal(del.Successful?.length, msgs.length, JSON.stringify(del.Failed));
        remaining -= msgs.length;
      }
    };
    await Promise.all([
      ...Array.from({ length: groups }, (_, g) => produce(g)),
      ...Array.from({ length: 6 }, (_, c) => consume(c)),
    ]);
    for (let g = 0; g < groups; g++) {
      assert.deepEqual(
        seen.get(`g${g}`),
        Array.from({ length: perGroup }, (_, i) => i),
        `group g${g} in order, once each`,
      );
      const spans = holds.get(`g${g}`)!.sort((a, b) => a.got - b.got);
      for (let k = 1; k < spans.length; k++) {
        assert.ok(spans[k]!.got > spans[k - 1]!.released, `group g${g} was handed out again before it was given back`);
      }
    }
  });

  test('a long poll on one node is woken by a send on another within tens of milliseconds', async (t) => {
    await clients[0]!.send(new CreateQueueCommand({ QueueName: 'wake' }));
    const latencies: number[] = [];
    for (let round = 0; round < 10; round++) {
      const [sender, waiter] = [round % 3, (round + 1) % 3];
      const polling = clients[waiter]!.send(
        new ReceiveMessageCommand({ QueueUrl: urlOn(waiter, 'wake'), WaitTimeSeconds: 10 }),
      );
      await new Promise((r) => setTimeout(r, 300)); // the poll is now waiting
      const received = polling.then(() => performance.now());
      await clients[sender]!.send(
        new SendMessageCommand({ QueueUrl: urlOn(sender, 'wake'), MessageBody: `r${round}` }),
      );
      const sentAt = performance.now();
      const out = await polling;
      assert.equal(out.Messages?.[0]?.Body, `r${round}`);
      latencies.push(Math.max(0, (await received) - sentAt));
      await clients[waiter]!.send(
        new DeleteMessageBatchCommand({
          QueueUrl: urlOn(waiter, 'wake'),
          Entries: [{ Id: 'x', ReceiptHandle: out.Messages![0]!.ReceiptHandle! }],
        }),
      );
    }
    latencies.sort((a, b) => a - b);
    const median = latencies[latencies.length >> 1]!;
    const max = latencies[latencies.length - 1]!;
    t.diagnostic(
      `cross-node wake-up after the send returned: median ${median.toFixed(1)} ms, max ${max.toFixed(1)} ms`,
    );
    assert.ok(
      max < 1000,
      `woken within 1 s (max ${max.toFixed(1)} ms); the fallback poll alone would take up to 1.5 s`,
    );
  });
});

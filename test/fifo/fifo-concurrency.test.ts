/**
 * Many consumers on many groups through a real server: no group's order is ever
 * violated, no group (and so no message) is held by two consumers at once, and every
 * message is consumed exactly once when consumers delete in time.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
} from '@aws-sdk/client-sqs';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

const GROUPS = 25;
const PER_GROUP = 40;
const CONSUMERS = 16;

let server: ServerProcess;
before(async () => {
  server = await startServerProcess({ storage: 'sqlite' });
});
after(async () => {
  await server.stop();
  server.cleanup();
});

test('many consumers on many groups keep order and exclusivity, and consume exactly once', async () => {
  const producer = server.client();
  const { QueueUrl } = await producer.send(
    new CreateQueueCommand({
      QueueName: 'conc.fifo',
      Attributes: { FifoQueue: 'true', ContentBasedDeduplication: 'true' },
    }),
  );
  // Interleave groups so that every batch mixes them.
  for (let i = 0; i < PER_GROUP; i++) {
    for (let g = 0; g < GROUPS; g += 10) {
      const Entries = Array.from({ length: Math.min(10, GROUPS - g) }, (_, k) => ({
        Id: `e${k}`,
        MessageGroupId: `g${g + k}`,
        MessageBody: `${g + k}:${i}`,
      }));
      await producer.send(new SendMessageBatchCommand({ QueueUrl, Entries }));
    }
  }

  const lastSeen = new Map<string, number>();
  const holder = new Map<string, number>();
  const consumed = new Map<string, number>();
  const violations: string[] = [];
  let done = 0;

  const consumer = async (id: number) => {
    const sqs = server.client();
    while (done < GROUPS * PER_GROUP) {
      const r = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1, VisibilityTimeout: 60 }),
      );
      const messages = r.Messages ?? [];
      if (messages.length === 0) continue;
      const groups = new Set<string>();
      for (const m of messages) {
        const [g, i] = m.Body!.split(':');
        groups.add(g!);
        const prev = lastSeen.get(g!) ?? -1;
        if (Number(i) !== prev + 1) violations.push(`group ${g}: got ${i} after ${prev}`);
        lastSeen.set(g!, Number(i));
        consumed.set(m.Body!, (consumed.get(m.Body!) ?? 0) + 1);
      }
      for (const g of groups) {
        const other = holder.get(g);
        if (other !== undefined && other !== id) violations.push(`group ${g} held by ${other} and ${id}`);
        holder.set(g, id);
      }
      // Release the groups before the delete is sent: once it commits, another
      // consumer may legitimately get the next messages.
      for (const g of groups) holder.delete(g);
      await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl,
          Entries: messages.map((m, k) => ({ Id: `d${k}`, ReceiptHandle: m.ReceiptHandle! })),
        }),
      );
      done += messages.length;
    }
  };
  await Promise.all(Array.from({ length: CONSUMERS }, (_, i) => consumer(i)));

  assert.deepEqual(violations, []);
  assert.equal(consumed.size, GROUPS * PER_GROUP);
  assert.deepEqual(
    [...consumed.values()].filter((c) => c !== 1),
    [],
    'each message consumed exactly once',
  );
  for (let g = 0; g < GROUPS; g++) assert.equal(lastSeen.get(String(g)), PER_GROUP - 1, `group ${g} finished in order`);
});

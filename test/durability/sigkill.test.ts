/**
 * Nothing acknowledged is lost: sends under load, SIGKILL mid-load, restart on the
 * same data directory, and every message whose send returned 200 is still there.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

const servers: ServerProcess[] = [];
after(async () => {
  for (const s of servers) if (s.proc.exitCode === null) await s.kill();
  servers[0]?.cleanup();
});

test('every acknowledged send survives SIGKILL of the server', async () => {
  const first = await startServerProcess({ storage: 'sqlite' });
  servers.push(first);
  const client = first.client();
  const { QueueUrl } = await client.send(new CreateQueueCommand({ QueueName: 'durable' }));
  const acked = new Set<string>();
  let stop = false;
  let n = 0;
  const worker = async (w: number) => {
    while (!stop) {
      const id = `${w}-${n++}`;
      try {
        if (n % 3 === 0) {
          const ids = [0, 1, 2, 3, 4].map((k) => `${id}-b${k}`);
          const r = await client.send(
            new SendMessageBatchCommand({ QueueUrl, Entries: ids.map((b, k) => ({ Id: `e${k}`, MessageBody: b })) }),
          );
          for (const s of r.Successful ?? []) acked.add(ids[Number(s.Id!.slice(1))]!);
        } else {
          await client.send(new SendMessageCommand({ QueueUrl, MessageBody: id }));
          acked.add(id);
        }
      } catch {
        return; // the server died under this request: it was never acknowledged
      }
    }
  };
  const workers = Array.from({ length: 16 }, (_, w) => worker(w));
  // Kill at a moment that depends on load, not on a fixed sleep of the test.
  while (acked.size < 1500) await new Promise((r) => setTimeout(r, 5));
  await first.kill();
  stop = true;
  await Promise.all(workers);
  assert.ok(acked.size >= 1500);

  const second = await startServerProcess({ storage: 'sqlite', dataDir: first.dataDir });
  servers.push(second);
  const c2 = second.client();
  const found = new Set<string>();
  for (;;) {
    const r = await c2.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 300 }));
    if (!r.Messages?.length) break;
    for (const m of r.Messages) found.add(m.Body!);
    await c2.send(
      new DeleteMessageBatchCommand({
        QueueUrl,
        Entries: r.Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })),
      }),
    );
  }
  const lost = [...acked].filter((b) => !found.has(b));
  assert.deepEqual(lost, [], `${lost.length} of ${acked.size} acknowledged messages lost`);
  await second.stop();
});

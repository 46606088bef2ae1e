/**
 * A move task survives the death of the node driving it: SIGKILL it (and another node
 * serving traffic), and a node started after takes the task over once its lease expires
 * and finishes it, with every message moved exactly once.
 */
import assert from 'node:assert/strict';
import {
  CreateQueueCommand,
  ListMessageMoveTasksCommand,
  SendMessageBatchCommand,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import { after, test } from 'node:test';
import pg from 'pg';
import { drain, redrivePolicy } from '../e2e/dlq-helpers.js';
import { createTestDatabase, type TestDatabase } from '../support/postgres.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

const ACCOUNT = '000000000000';
const arn = (name: string) => `arn:aws:sqs:us-east-1:${ACCOUNT}:${name}`;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

let db: TestDatabase | undefined;
const nodes: ServerProcess[] = [];
after(async () => {
  await Promise.all(nodes.map((n) => (n.proc.exitCode === null && n.proc.signalCode === null ? n.stop() : undefined)));
  nodes.forEach((n) => n.cleanup());
  await db?.drop();
});

test('a move task whose node is killed is finished by a surviving node, nothing lost or doubled', {
  timeout: 90_000,
}, async (t) => {
  db = await createTestDatabase();
  // Two nodes, either of which may lease the task, are killed at its first progress seen;
  // the survivor is started only then. How fast this machine is changes when, not whether.
  nodes.push(...(await Promise.all([0, 1].map(() => startServerProcess({ storage: db!.url })))));
  const sqs = nodes[0]!.client();
  const url = (node: ServerProcess, q: string) => `${node.url}/${ACCOUNT}/${q}`;
  await sqs.send(new CreateQueueCommand({ QueueName: 'dlq' }));
  await sqs.send(new CreateQueueCommand({ QueueName: 'dest' }));
  await sqs.send(new CreateQueueCommand({ QueueName: 'src', Attributes: { RedrivePolicy: redrivePolicy('dlq') } }));
  const total = 1000;
  for (let i = 0; i < total; i += 10) {
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: url(nodes[0]!, 'dlq'),
        Entries: Array.from({ length: 10 }, (_, j) => ({ Id: `e${j}`, MessageBody: `m${i + j}` })),
      }),
    );
  }

  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  const task = async () =>
    (await client.query<{ lease_owner: string | null; moved: string; status: string }>('SELECT * FROM move_tasks'))
      .rows[0];
  try {
    // At 100 a second the task takes 10 s: the kill comes at its first progress seen.
    await sqs.send(
      new StartMessageMoveTaskCommand({
        SourceArn: arn('dlq'),
        DestinationArn: arn('dest'),
        MaxNumberOfMessagesPerSecond: 100,
      }),
    );
    let before = await task();
    while (!(before?.lease_owner && Number(before.moved) > 0)) {
      assert.notEqual(before?.status, 'COMPLETED', 'the task did not finish before its first progress was seen');
      await pause(20);
      before = await task();
    }
    await Promise.all(nodes.map((n) => n.kill()));
    const survivorNode = await startServerProcess({ storage: db.url });
    nodes.push(survivorNode);
    const killedAt = Date.now();
    const survivor = survivorNode.client();
    let status = '';
    while (status !== 'COMPLETED') {
      assert.ok(Date.now() - killedAt < 60_000, 'the new node finishes the task within a minute');
      await pause(250);
      const out = await survivor.send(new ListMessageMoveTasksCommand({ SourceArn: arn('dlq') }));
      status = out.Results?.[0]?.Status ?? '';
      assert.notEqual(status, 'FAILED');
    }
    const afterKill = await task();
    assert.notEqual(afterKill?.lease_owner, before.lease_owner, 'another node drove the task to the end');
    t.diagnostic(
      `${before.moved} moved before SIGKILL; the node started after it completed the task ${((Date.now() - killedAt) / 1000).toFixed(1)} s later`,
    );
    const moved = (await drain(survivor, url(survivorNode, 'dest'))).map((m) => m.Body!);
    assert.equal(moved.length, total, 'each message arrived once');
    assert.deepEqual(new Set(moved), new Set(Array.from({ length: total }, (_, i) => `m${i}`)));
    assert.deepEqual(await drain(survivor, url(survivorNode, 'dlq')), [], 'nothing stayed behind');
  } finally {
    await client.end();
  }
});

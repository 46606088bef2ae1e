/**
 * Fair queues end to end with the AWS SDK v3, on a server with a manual clock: a tenant
 * with 40 messages in flight and a backlog sent before everyone else's is noisy, so the
 * next receive serves the quiet tenants; GetQueueAttributes reports the CloudWatch
 * fair-queue figures when asked for them by name.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SendMessageBatchCommand, type QueueAttributeName, type SQSClient } from '@aws-sdk/client-sqs';
import { useServerProcess, type ServerProcess } from '../support/server-process.js';
import { attributes, createQueue, receive } from './helpers.js';

let server: ServerProcess;
let sqs: SQSClient;
useServerProcess({ storage: 'sqlite', manualClock: true }, (s) => {
  server = s;
  sqs = s.client();
});

async function send(QueueUrl: string, group: string, n: number): Promise<void> {
  for (let i = 0; i < n; i += 10) {
    const Entries = Array.from({ length: Math.min(10, n - i) }, (_, k) => ({
      Id: `e${k}`,
      MessageBody: `${group}-${i + k}`,
      MessageGroupId: group,
    }));
    await sqs.send(new SendMessageBatchCommand({ QueueUrl, Entries }));
  }
}

test("a noisy tenant's backlog does not hold back the quiet tenants", async () => {
  const QueueUrl = await createQueue(sqs, 'fair-tenants');
  await send(QueueUrl, 'big', 100);
  for (let i = 0; i < 4; i++)
    assert.equal((await receive(sqs, QueueUrl, { MaxNumberOfMessages: 10, VisibilityTimeout: 300 })).length, 10);
  for (let g = 0; g < 5; g++) await send(QueueUrl, `small${g}`, 1);
  await server.advanceClock(1000);
  const got = await receive(sqs, QueueUrl, { MaxNumberOfMessages: 10, VisibilityTimeout: 300 });
  assert.deepEqual(
    got.map((m) => m.Body),
    ['small0-0', 'small1-0', 'small2-0', 'small3-0', 'small4-0', 'big-40', 'big-41', 'big-42', 'big-43', 'big-44'],
  );
  const names = [
    'ApproximateNumberOfNoisyGroups',
    'ApproximateNumberOfMessagesVisibleInQuietGroups',
    'ApproximateNumberOfMessagesNotVisibleInQuietGroups',
  ];
  assert.deepEqual(await attributes(sqs, QueueUrl, names as QueueAttributeName[]), {
    ApproximateNumberOfNoisyGroups: '1',
    ApproximateNumberOfMessagesVisibleInQuietGroups: '0',
    ApproximateNumberOfMessagesNotVisibleInQuietGroups: '5',
  });
});

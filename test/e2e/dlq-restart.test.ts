/** Move tasks survive a server restart and a SIGKILL: they resume, and no message is lost or doubled. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StartMessageMoveTaskCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { rawJson } from './helpers.js';
import { arn, deadLetter, latestTask, runToEnd, sourceOf, waitFor } from './dlq-helpers.js';

const queueUrl = (server: ServerProcess, name: string) => `${server.url}/000000000000/${name}`;

/** Every body in the queue, read with PeekMessages, which changes nothing. */
async function bodies(server: ServerProcess, name: string): Promise<string[]> {
  const out: string[] = [];
  let token: string | undefined;
  do {
    const res = await rawJson(
      server.url,
      'AmazonSQS.PeekMessages',
      JSON.stringify({ QueueUrl: queueUrl(server, name), MaxResults: 100, NextToken: token }),
    );
    assert.equal(res.status, 200, res.text);
    const page = res.json as { Messages: { Body: string }[]; NextToken?: string };
    out.push(...page.Messages.map((m) => m.Body));
    token = page.NextToken;
  } while (token);
  return out;
}

/** The bodies across source and DLQ: each exactly once, whatever the moment. */
async function assertEachOnce(server: ServerProcess, expected: string[]) {
  const all = [...(await bodies(server, 'src')), ...(await bodies(server, 'dlq'))];
  assert.equal(all.length, expected.length, 'no message doubled or lost');
  assert.deepEqual(new Set(all), new Set(expected));
}

async function setUp(count: number): Promise<{ server: ServerProcess; sqs: SQSClient; expected: string[] }> {
  const server = await startServerProcess({ storage: 'sqlite', manualClock: true });
  const sqs = server.client();
  const src = await sourceOf(sqs, 'src', 'dlq');
  const expected = Array.from({ length: count }, (_, i) => `body-${i}`);
  await deadLetter(sqs, src, expected);
  return { server, sqs, expected };
}

test('a task stopped with the server resumes on restart where it stopped', async () => {
  const { server, sqs, expected } = await setUp(40);
  await sqs.send(new StartMessageMoveTaskCommand({ SourceArn: arn('dlq'), MaxNumberOfMessagesPerSecond: 5 }));
  await waitFor(
    () => latestTask(sqs, arn('dlq')),
    (t) => t?.ApproximateNumberOfMessagesMoved === 5,
    'first batch',
  );
  await server.advanceClock(1_000);
  const before = await waitFor(
    () => latestTask(sqs, arn('dlq')),
    (t) => t?.ApproximateNumberOfMessagesMoved === 10,
    'second batch',
  );
  await server.stop();

  const again = await startServerProcess({ storage: 'sqlite', manualClock: true, dataDir: server.dataDir });
  try {
    const sqs2 = again.client();
    const resumed = await latestTask(sqs2, arn('dlq'));
    assert.equal(resumed!.Status, 'RUNNING');
    assert.equal(resumed!.StartedTimestamp, before!.StartedTimestamp);
    assert.ok(resumed!.ApproximateNumberOfMessagesMoved! >= 10);
    const done = await runToEnd(again, sqs2, arn('dlq'));
    assert.equal(done.Status, 'COMPLETED');
    assert.equal(done.ApproximateNumberOfMessagesMoved, 40);
    assert.equal(done.ApproximateNumberOfMessagesToMove, 40);
    assert.deepEqual((await bodies(again, 'src')).sort(), [...expected].sort());
    assert.deepEqual(await bodies(again, 'dlq'), []);
  } finally {
    await again.stop();
    server.cleanup();
  }
});

test('SIGKILL in the middle of a task: every body stays exactly once, and the task completes after restart', async () => {
  const { server, sqs, expected } = await setUp(1000);
  await sqs.send(new StartMessageMoveTaskCommand({ SourceArn: arn('dlq') }));
  const seen = await waitFor(
    () => latestTask(sqs, arn('dlq')),
    (t) => (t?.ApproximateNumberOfMessagesMoved ?? 0) > 0,
    'first batch',
  );
  await server.kill();
  console.log(`killed after seeing ${seen!.ApproximateNumberOfMessagesMoved} moved (${seen!.Status})`);

  const again = await startServerProcess({ storage: 'sqlite', manualClock: true, dataDir: server.dataDir });
  try {
    const sqs2 = again.client();
    await assertEachOnce(again, expected);
    const afterCrash = await latestTask(sqs2, arn('dlq'));
    // The task's progress was committed with the moves themselves.
    assert.equal(afterCrash!.ApproximateNumberOfMessagesMoved, (await bodies(again, 'src')).length);
    // The dead node's lease runs out on the server clock; then this node takes the task over.
    const done = await runToEnd(again, sqs2, arn('dlq'));
    assert.equal(done.Status, 'COMPLETED');
    assert.equal(done.ApproximateNumberOfMessagesMoved, 1000);
    await assertEachOnce(again, expected);
    assert.equal((await bodies(again, 'src')).length, 1000);
  } finally {
    await again.stop();
    server.cleanup();
  }
});

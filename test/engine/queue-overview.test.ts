/**
 * ListQueueSummaries as the console's overview queries it (src/engine/queues/queue-overview.ts):
 * filtered, sorted and paged by the server, with the dead-letter queues' cards in the same
 * answer.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testEngine } from './support.js';

type Summary = { QueueName: string; ApproximateNumberOfMessages: number; Region: string };

async function account() {
  const t = testEngine();
  const url = async (name: string, attributes: Record<string, string> = {}) => (await t.call('CreateQueue', { QueueName: name, Attributes: attributes })).QueueUrl as string;
  const dlqA = await url('alpha-dlq');
  const dlqB = await url('beta-dlq');
  const dlqC = await url('gamma-dlq.fifo', { FifoQueue: 'true' });
  const policy = (dlq: string) => ({ RedrivePolicy: JSON.stringify({ deadLetterTargetArn: `arn:aws:sqs:us-east-1:000000000000:${dlq}`, maxReceiveCount: 1 }) });
  await url('alpha', policy('alpha-dlq'));
  await url('beta', policy('beta-dlq'));
  await url('gamma.fifo', { FifoQueue: 'true', ...policy('gamma-dlq.fifo') });
  const plain = await url('Plain-Queue');
  for (let i = 0; i < 3; i++) await t.call('SendMessage', { QueueUrl: plain, MessageBody: `p${i}` });
  await t.call('SendMessage', { QueueUrl: dlqB, MessageBody: 'dead' });
  for (let i = 0; i < 2; i++) await t.call('SendMessage', { QueueUrl: dlqA, MessageBody: `dead${i}` });
  void dlqC;
  return t;
}

const names = (out: Record<string, any>) => (out.Queues as Summary[]).map((q) => q.QueueName);

test('filters by part of the name (any case), by type and by role, and says how many matched', async () => {
  const { call, close } = await account();
  const a = await call('ListQueueSummaries', { NameContains: 'ALPHA' });
  assert.deepEqual(names(a), ['alpha', 'alpha-dlq']);
  assert.equal(a.TotalCount, 2);
  assert.deepEqual(names(await call('ListQueueSummaries', { QueueType: 'fifo' })), ['gamma-dlq.fifo', 'gamma.fifo']);
  assert.deepEqual(names(await call('ListQueueSummaries', { Only: 'WithMessages' })), ['Plain-Queue', 'alpha-dlq', 'beta-dlq']);
  assert.deepEqual(names(await call('ListQueueSummaries', { Only: 'DeadLetterQueues' })), ['alpha-dlq', 'beta-dlq', 'gamma-dlq.fifo']);
  assert.deepEqual(names(await call('ListQueueSummaries', { Only: 'DeadLetterQueuesWithMessages', QueueType: 'standard' })), ['alpha-dlq', 'beta-dlq']);
  await close();
});

test('sorts by a count, ties by name, and pages with an offset token through every match', async () => {
  const { call, close } = await account();
  const byVisible = await call('ListQueueSummaries', { SortBy: 'Visible', SortOrder: 'Descending', MaxResults: 3 });
  assert.deepEqual(byVisible.Queues.map((q: Summary) => [q.QueueName, q.ApproximateNumberOfMessages]), [['Plain-Queue', 3], ['alpha-dlq', 2], ['beta-dlq', 1]]);
  assert.equal(byVisible.TotalCount, 7);
  const seen: string[] = [];
  let NextToken: string | undefined;
  do {
    const out = await call('ListQueueSummaries', { SortBy: 'Name', MaxResults: 2, ...(NextToken && { NextToken }) });
    seen.push(...names(out));
    NextToken = out.NextToken;
  } while (NextToken);
  assert.deepEqual(seen, ['Plain-Queue', 'alpha', 'alpha-dlq', 'beta', 'beta-dlq', 'gamma-dlq.fifo', 'gamma.fifo']);
  await close();
});

test('the dead-letter queues come along, those holding the most messages first', async () => {
  const { call, close } = await account();
  const out = await call('ListQueueSummaries', { IncludeDeadLetterQueues: true, NameContains: 'plain' });
  assert.deepEqual(names(out), ['Plain-Queue'], 'the page is filtered');
  assert.deepEqual(out.DeadLetterQueues.map((q: Summary) => q.QueueName), ['alpha-dlq', 'beta-dlq', 'gamma-dlq.fifo'], 'the cards are not');
  assert.equal(out.DeadLetterQueueCount, 3);
  await close();
});

test('a queue created or changed after a listing shows in the next one', async () => {
  const { call, close } = await account();
  assert.equal((await call('ListQueueSummaries', { NameContains: 'delta' })).TotalCount, 0);
  const { QueueUrl } = await call('CreateQueue', { QueueName: 'delta' });
  assert.deepEqual(names(await call('ListQueueSummaries', { NameContains: 'delta' })), ['delta']);
  await call('SetQueueAttributes', { QueueUrl, Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: 'arn:aws:sqs:us-east-1:000000000000:alpha-dlq', maxReceiveCount: 2 }) } });
  const dlq = (await call('ListQueueSummaries', { Only: 'DeadLetterQueues', NameContains: 'alpha' })).Queues[0];
  assert.equal(dlq.DeadLetterSourceQueueUrls.length, 2, 'the new source feeds alpha-dlq');
  await call('DeleteQueue', { QueueUrl });
  assert.equal((await call('ListQueueSummaries', { NameContains: 'delta' })).TotalCount, 0);
  await close();
});

test('bad overview inputs get InvalidParameterValue', async () => {
  const { call, close } = await account();
  for (const input of [{ SortBy: 'Colour' }, { SortOrder: 'up' }, { QueueType: 'lifo' }, { Only: 'Some' }, { NameContains: 'x'.repeat(81) }, { SortBy: 'Name', NextToken: 'nope' }]) {
    await assert.rejects(call('ListQueueSummaries', input), (e: Error & { code?: string }) => e.code === 'InvalidParameterValue', JSON.stringify(input));
  }
  await close();
});

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
  const url = async (name: string, attributes: Record<string, string> = {}) =>
    (await t.call('CreateQueue', { QueueName: name, Attributes: attributes })).QueueUrl as string;
  const dlqA = await url('alpha-dlq');
  const dlqB = await url('beta-dlq');
  const dlqC = await url('gamma-dlq.fifo', { FifoQueue: 'true' });
  const policy = (dlq: string) => ({
    RedrivePolicy: JSON.stringify({
      deadLetterTargetArn: `arn:aws:sqs:us-east-1:000000000000:${dlq}`,
      maxReceiveCount: 1,
    }),
  });
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
  assert.deepEqual(names(await call('ListQueueSummaries', { Only: 'WithMessages' })), [
    'Plain-Queue',
    'alpha-dlq',
    'beta-dlq',
  ]);
  assert.deepEqual(names(await call('ListQueueSummaries', { Only: 'DeadLetterQueues' })), [
    'alpha-dlq',
    'beta-dlq',
    'gamma-dlq.fifo',
  ]);
  assert.deepEqual(
    names(await call('ListQueueSummaries', { Only: 'DeadLetterQueuesWithMessages', QueueType: 'standard' })),
    ['alpha-dlq', 'beta-dlq'],
  );
  await close();
});

test('sorts by a count, ties by name, and pages with an offset token through every match', async () => {
  const { call, close } = await account();
  const byVisible = await call('ListQueueSummaries', { SortBy: 'Visible', SortOrder: 'Descending', MaxResults: 3 });
  assert.deepEqual(
    byVisible.Queues.map((q: Summary) => [q.QueueName, q.ApproximateNumberOfMessages]),
    [
      ['Plain-Queue', 3],
      ['alpha-dlq', 2],
      ['beta-dlq', 1],
    ],
  );
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

test('the dead-letter queues holding messages come along, the most first, under the same filters', async () => {
  const { call, close } = await account();
  const cards = (out: Record<string, any>) => (out.DeadLetterQueues as Summary[]).map((q) => q.QueueName);
  const all = await call('ListQueueSummaries', { IncludeDeadLetterQueues: true });
  assert.deepEqual(cards(all), ['alpha-dlq', 'beta-dlq'], 'the empty gamma-dlq.fifo is no card');
  assert.equal(all.DeadLetterQueueCount, 2);
  const beta = await call('ListQueueSummaries', { IncludeDeadLetterQueues: true, NameContains: 'BETA' });
  assert.deepEqual(names(beta), ['beta', 'beta-dlq'], 'the page is filtered');
  assert.deepEqual(cards(beta), ['beta-dlq'], 'and so are the cards');
  assert.equal(beta.DeadLetterQueueCount, 1);
  const fifo = await call('ListQueueSummaries', {
    IncludeDeadLetterQueues: true,
    Only: 'DeadLetterQueuesWithMessages',
    QueueType: 'fifo',
  });
  assert.deepEqual([names(fifo), cards(fifo), fifo.DeadLetterQueueCount], [[], [], 0]);
  await close();
});

test('a queue created or changed after a listing shows in the next one', async () => {
  const { call, close } = await account();
  assert.equal((await call('ListQueueSummaries', { NameContains: 'delta' })).TotalCount, 0);
  const { QueueUrl } = await call('CreateQueue', { QueueName: 'delta' });
  assert.deepEqual(names(await call('ListQueueSummaries', { NameContains: 'delta' })), ['delta']);
  await call('SetQueueAttributes', {
    QueueUrl,
    Attributes: {
      RedrivePolicy: JSON.stringify({
        deadLetterTargetArn: 'arn:aws:sqs:us-east-1:000000000000:alpha-dlq',
        maxReceiveCount: 2,
      }),
    },
  });
  const dlq = (await call('ListQueueSummaries', { Only: 'DeadLetterQueues', NameContains: 'alpha' })).Queues[0];
  assert.equal(dlq.DeadLetterSourceQueueUrls.length, 2, 'the new source feeds alpha-dlq');
  await call('DeleteQueue', { QueueUrl });
  assert.equal((await call('ListQueueSummaries', { NameContains: 'delta' })).TotalCount, 0);
  await close();
});

test('bad overview inputs get InvalidParameterValue', async () => {
  const { call, close } = await account();
  for (const input of [
    { SortBy: 'Colour' },
    { SortOrder: 'up' },
    { QueueType: 'lifo' },
    { Only: 'Some' },
    { NameContains: 'x'.repeat(81) },
    { SortBy: 'Name', NextToken: 'nope' },
  ]) {
    await assert.rejects(
      call('ListQueueSummaries', input),
      (e: Error & { code?: string }) => e.code === 'InvalidParameterValue',
      JSON.stringify(input),
    );
  }
  await close();
});

test('rates: the last 60 s per second, the previous minute weighted by its part in them; sorted by the server; the same on the queue page', async () => {
  const { clock, call, close } = await account();
  const at = (ms: number) => clock.advance(T0 + ms - clock.now());
  const T0 = clock.now() - (clock.now() % 60_000) + 60_000;
  const url = async (name: string) => (await call('GetQueueUrl', { QueueName: name })).QueueUrl as string;
  const [alpha, beta] = [await url('alpha'), await url('beta')];
  const send = async (q: string, n: number) => {
    for (let i = 0; i < n; i++) await call('SendMessage', { QueueUrl: q, MessageBody: `m${i}` });
  };
  at(10_000);
  await send(alpha, 60);
  for (let i = 0; i < 3; i++) {
    const got = await call('ReceiveMessage', { QueueUrl: alpha, MaxNumberOfMessages: 10 });
    for (const m of got.Messages) await call('DeleteMessage', { QueueUrl: alpha, ReceiptHandle: m.ReceiptHandle });
  }
  at(70_000);
  await send(alpha, 30);
  await send(beta, 1);
  // beta's message is received twice with maxReceiveCount 1: dead-lettered to beta-dlq.
  await call('ReceiveMessage', { QueueUrl: beta, VisibilityTimeout: 0 });
  await call('ReceiveMessage', { QueueUrl: beta });
  at(75_000);
  await send(beta, 119);

  at(90_000); // halfway through the minute: the previous one counts for half
  const rates = async (name: string) =>
    ((await call('ListQueueSummaries', { NameContains: name })).Queues as any[]).find((q) => q.QueueName === name)
      .Rates;
  assert.deepEqual(await rates('alpha'), {
    Sent: (30 + 60 * 0.5) / 60,
    Received: (30 * 0.5) / 60,
    Deleted: (30 * 0.5) / 60,
    DeadLettered: 0,
    DeadLetterArrivals: 0,
  });
  assert.deepEqual(
    await rates('beta'),
    { Sent: 2, Received: 0.017, Deleted: 0, DeadLettered: 0.017, DeadLetterArrivals: 0 },
    'one delivery (the second receive dead-letters it instead) and one dead-lettering in 60 s, rounded to thousandths',
  );
  assert.deepEqual(await rates('beta-dlq'), {
    Sent: 0,
    Received: 0,
    Deleted: 0,
    DeadLettered: 0,
    DeadLetterArrivals: 0.017,
  });
  assert.deepEqual(
    await rates('Plain-Queue'),
    { Sent: 0, Received: 0, Deleted: 0, DeadLettered: 0, DeadLetterArrivals: 0 },
    'its sends are older than two minutes',
  );
  const activity = await call('GetQueueActivity', { QueueUrl: alpha });
  assert.deepEqual(activity.Rates, await rates('alpha'), 'the queue page has the same rates');

  const sorted = await call('ListQueueSummaries', { SortBy: 'SentRate', SortOrder: 'Descending', MaxResults: 3 });
  assert.deepEqual(names(sorted), ['beta', 'alpha', 'Plain-Queue'], 'by rate, then ties by name');
  assert.deepEqual(
    names(await call('ListQueueSummaries', { SortBy: 'DeadLetteredRate', SortOrder: 'Descending', MaxResults: 1 })),
    ['beta'],
  );
  assert.deepEqual(
    names(await call('ListQueueSummaries', { SortBy: 'ReceivedRate', SortOrder: 'Descending', MaxResults: 2 })),
    ['alpha', 'beta'],
  );
  assert.deepEqual(
    names(await call('ListQueueSummaries', { SortBy: 'SentRate', MaxResults: 2, NameContains: 'a' })),
    ['Plain-Queue', 'alpha-dlq'],
    'ascending',
  );
  const cards = (await call('ListQueueSummaries', { IncludeDeadLetterQueues: true, NameContains: 'beta' }))
    .DeadLetterQueues as any[];
  assert.equal(
    cards.find((q) => q.QueueName === 'beta-dlq').Rates.DeadLetterArrivals,
    0.017,
    'the cards have rates too',
  );

  at(120_000); // the next minute: the previous one counts whole
  assert.equal((await rates('alpha')).Sent, 0.5);
  at(180_000); // two minutes on: nothing in the last 60 s
  assert.equal((await rates('alpha')).Sent, 0);
  assert.equal((await call('GetQueueActivity', { QueueUrl: alpha })).Rates.Sent, 0);
  assert.deepEqual(
    (await call('ListQueueSummaries', { QueueNamePrefix: 'alpha' })).Queues[0].Rates.Sent,
    0,
    'the plain listing has rates',
  );
  await close();
});

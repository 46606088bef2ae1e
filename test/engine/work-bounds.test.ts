/**
 * The work one request does over a queue's bodies is bounded, so one request cannot hold
 * the server. A
 * filtered PeekMessages examines at most PEEK_SCAN (1,000 messages, 4 MiB of bodies), a
 * DryRun count at most COUNT_SCAN (100,000 messages, 16 MiB) and says when it stopped
 * short; both give the event loop back between reads.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PEEK_SCAN } from '../../src/engine/messages/bounded-scan.js';
import { COUNT_SCAN } from '../../src/engine/actions/move-task-actions.js';
import { ctx, testEngine } from './support.js';

const arn = (name: string) => `arn:aws:sqs:${ctx.region}:${ctx.accountId}:${name}`;
/** A JSON body of about `kb` KiB, as in the report (210 KB documents). */
const body = (i: number, kb: number) => JSON.stringify({ i, pad: 'x'.repeat(kb * 1024) });

/** Counts event-loop turns while `p` runs: more than one means it yielded. */
async function turnsDuring<T>(p: () => Promise<T>): Promise<{ value: T; turns: number }> {
  let turns = 0;
  let done = false;
  const tick = () => {
    turns++;
    if (!done) setImmediate(tick);
  };
  setImmediate(tick);
  const value = await p();
  done = true;
  return { value, turns };
}

test('a filtered PeekMessages stops at its body budget, yields between reads, and resumes where it stopped', async () => {
  const { call, close } = testEngine();
  try {
    const { QueueUrl } = await call('CreateQueue', { QueueName: 'big' });
    const n = Math.ceil(PEEK_SCAN.bytes / (210 * 1024)) + 10;
    for (let i = 0; i < n; i++) await call('SendMessage', { QueueUrl, MessageBody: body(i, 210) });
    const Filter = { BodyJsonPath: '$.i', Equals: n - 1 };
    const { value: first, turns } = await turnsDuring(() => call('PeekMessages', { QueueUrl, Filter }));
    assert.deepEqual(first.Messages, [], 'the match is past the budget');
    assert.ok(first.NextToken, 'a token to go on');
    assert.ok(turns > 1, 'the event loop ran between reads');
    let token = first.NextToken;
    let found: unknown[] = [];
    let requests = 1;
    while (token) {
      const page = await call('PeekMessages', { QueueUrl, Filter, NextToken: token });
      found = found.concat(page.Messages);
      token = page.NextToken;
      requests++;
    }
    assert.equal(found.length, 1, 'found once the scan reached it');
    assert.ok(requests >= 2 && requests <= 4, `${requests} requests`);
  } finally {
    await close();
  }
});

test('a DryRun count stops at its body budget and says the count is a lower bound; within it, the count is exact', async () => {
  const { call, close } = testEngine();
  try {
    const { QueueUrl } = await call('CreateQueue', { QueueName: 'count-dlq' });
    await call('CreateQueue', {
      QueueName: 'count-src',
      Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arn('count-dlq'), maxReceiveCount: 1 }) },
    });
    await call('CreateQueue', { QueueName: 'count-dest' });
    const kb = 512;
    const n = Math.ceil(COUNT_SCAN.bytes / (kb * 1024)) + 5;
    for (let i = 0; i < n; i++) await call('SendMessage', { QueueUrl, MessageBody: body(i, kb) });
    const input = { SourceArn: arn('count-dlq'), DestinationArn: arn('count-dest'), DryRun: true };
    const { value: dry, turns } = await turnsDuring(() =>
      call('StartMessageMoveTask', { ...input, Filter: { BodyJsonPath: '$.i' } }),
    );
    assert.equal(dry.ApproximateNumberOfMessagesToMoveIsLowerBound, true);
    assert.ok(
      dry.ApproximateNumberOfMessagesToMove >= COUNT_SCAN.bytes / ((kb + 1) * 1024) &&
        dry.ApproximateNumberOfMessagesToMove < n,
      String(dry.ApproximateNumberOfMessagesToMove),
    );
    assert.ok(turns > 1, 'the event loop ran between reads');
    const { QueueUrl: small } = await call('CreateQueue', { QueueName: 'small-dlq' });
    await call('CreateQueue', {
      QueueName: 'small-src',
      Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arn('small-dlq'), maxReceiveCount: 1 }) },
    });
    for (let i = 0; i < 3; i++) await call('SendMessage', { QueueUrl: small, MessageBody: body(i, 1) });
    const exact = await call('StartMessageMoveTask', {
      SourceArn: arn('small-dlq'),
      DestinationArn: arn('count-dest'),
      DryRun: true,
    });
    assert.deepEqual(exact, { ApproximateNumberOfMessagesToMove: 3 }, 'no flag when the count is complete');
  } finally {
    await close();
  }
});

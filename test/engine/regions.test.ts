/**
 * Regions in the engine (docs/regions.md): queue URLs by host, the dead-letter target of
 * a server policy found in the source's region, and ListQueueSummaries' Region and
 * AllRegions with paging.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { actions } from '../../src/engine/actions/registry.js';
import { regionOfHost } from '../../src/engine/kernel/addressing.js';
import { ManualClock } from '../../src/engine/kernel/clock.js';
import { Engine } from '../../src/engine/engine.js';
import type { RequestContext } from '../../src/engine/kernel/types.js';
import { SqliteStore } from '../../src/stores/sqlite/store.js';
import { ctx, testEngine } from './support.js';

test('only a label shaped like an AWS region makes a host name a region', () => {
  assert.equal(regionOfHost('sqs.eu-west-1.localhost:9324'), 'eu-west-1');
  assert.equal(regionOfHost('sqs.us-gov-west-1.amazonaws.com'), 'us-gov-west-1');
  assert.equal(regionOfHost('sqs.us-east-1.localhost.localstack.cloud:4566'), 'us-east-1');
  // A deployment's own host names no region: the request keeps the server's.
  assert.equal(regionOfHost('sqs.example.com:4566'), undefined);
  assert.equal(regionOfHost('sqs.internal.corp'), undefined);
  assert.equal(regionOfHost('sqs.localhost'), undefined);
  assert.equal(regionOfHost('queues.eu-west-1.example.com'), undefined);
});

const inRegion = (region: string, baseUrl = ctx.baseUrl): RequestContext => ({ ...ctx, region, baseUrl });

test("a host sqs.<region>.… gives other regions' queues their own host, and a URL resolves in its host's region", async () => {
  const { engine, close } = testEngine();
  try {
    const call = (c: RequestContext, action: string, input: Record<string, unknown>) =>
      actions[action]!(engine, c, input) as Promise<Record<string, any>>;
    const west = inRegion('eu-west-1', 'http://sqs.eu-west-1.example.test:9324');
    const { QueueUrl } = await call(west, 'CreateQueue', { QueueName: 'jobs' });
    assert.equal(QueueUrl, 'http://sqs.eu-west-1.example.test:9324/000000000000/jobs');
    // Signed for the west, sent by the east's host: the west's host.
    const viaEast = inRegion('eu-west-1', 'http://sqs.us-east-1.example.test:9324');
    assert.equal((await call(viaEast, 'GetQueueUrl', { QueueName: 'jobs' })).QueueUrl, QueueUrl);
    // A plain host names no region: the URL stays on it, with the region in its path
    // (the same name in two regions must not share a URL), and resolves there.
    const onPlain = (await call(inRegion('eu-west-1'), 'GetQueueUrl', { QueueName: 'jobs' })).QueueUrl as string;
    assert.equal(onPlain, `${ctx.baseUrl}/eu-west-1/000000000000/jobs`);
    assert.equal(
      (await call(inRegion('us-east-1'), 'GetQueueAttributes', { QueueUrl: onPlain, AttributeNames: ['QueueArn'] }))
        .Attributes.QueueArn,
      'arn:aws:sqs:eu-west-1:000000000000:jobs',
    );
    await call(inRegion('us-east-1'), 'CreateQueue', { QueueName: 'jobs' });
    assert.equal(
      (await call(inRegion('us-east-1'), 'GetQueueUrl', { QueueName: 'jobs' })).QueueUrl,
      `${ctx.baseUrl}/000000000000/jobs`,
      'the default region keeps the plain URL',
    );
    const attrs = await call(inRegion('us-east-1'), 'GetQueueAttributes', { QueueUrl, AttributeNames: ['QueueArn'] });
    assert.equal(
      attrs.Attributes.QueueArn,
      'arn:aws:sqs:eu-west-1:000000000000:jobs',
      "the URL's host names the region",
    );
    await assert.rejects(
      call(inRegion('us-east-1'), 'GetQueueAttributes', { QueueUrl: `${ctx.baseUrl}/000000000000/nope` }),
      { name: 'QueueDoesNotExist' },
    );
  } finally {
    await close();
  }
});

test("a server policy's deadLetterTargetName is the queue of that name in the source's region", async () => {
  const clock = new ManualClock(1_700_000_000_000);
  const engine = new Engine({
    store: new SqliteStore({ path: ':memory:' }),
    clock,
    region: 'us-east-1',
    policies: [
      { name: 'p', pattern: '^work', priority: 0, definition: { deadLetterTargetName: 'dlq', maxReceiveCount: 1 } },
    ],
  });
  const call = (c: RequestContext, action: string, input: Record<string, unknown>) =>
    actions[action]!(engine, c, input) as Promise<Record<string, any>>;
  try {
    const west = inRegion('eu-west-1');
    await call(ctx, 'CreateQueue', { QueueName: 'dlq' });
    await call(west, 'CreateQueue', { QueueName: 'dlq' });
    const { QueueUrl } = await call(west, 'CreateQueue', { QueueName: 'work' });
    await call(west, 'SendMessage', { QueueUrl, MessageBody: 'poison' });
    await call(west, 'ReceiveMessage', { QueueUrl, VisibilityTimeout: 0 });
    await call(west, 'ReceiveMessage', { QueueUrl });
    const count = async (c: RequestContext) =>
      (
        await call(c, 'GetQueueAttributes', {
          QueueUrl: `${ctx.baseUrl}/000000000000/dlq`,
          AttributeNames: ['ApproximateNumberOfMessages'],
        })
      ).Attributes.ApproximateNumberOfMessages;
    assert.equal(await count(west), '1', "dead-lettered into the west's dlq");
    assert.equal(await count(ctx), '0');
  } finally {
    await engine.close();
    await engine.store.close();
  }
});

test("ListQueueSummaries names each queue's Region, lists the caller's region, and every region with AllRegions, paged", async () => {
  const { engine, close } = testEngine();
  try {
    const call = (c: RequestContext, action: string, input: Record<string, unknown>) =>
      actions[action]!(engine, c, input) as Promise<Record<string, any>>;
    for (const region of ['us-east-1', 'eu-west-1'])
      for (const name of ['a', 'b']) await call(inRegion(region), 'CreateQueue', { QueueName: name });
    const mine = await call(inRegion('eu-west-1'), 'ListQueueSummaries', {});
    assert.deepEqual(
      mine.Queues.map((q: any) => [q.QueueName, q.Region]),
      [
        ['a', 'eu-west-1'],
        ['b', 'eu-west-1'],
      ],
    );
    const seen: string[][] = [];
    let NextToken: string | undefined;
    do {
      const page = await call(ctx, 'ListQueueSummaries', { AllRegions: true, MaxResults: 3, NextToken });
      seen.push(...page.Queues.map((q: any) => [q.QueueName, q.Region, q.QueueArn]));
      NextToken = page.NextToken;
    } while (NextToken);
    assert.deepEqual(seen, [
      ['a', 'eu-west-1', 'arn:aws:sqs:eu-west-1:000000000000:a'],
      ['a', 'us-east-1', 'arn:aws:sqs:us-east-1:000000000000:a'],
      ['b', 'eu-west-1', 'arn:aws:sqs:eu-west-1:000000000000:b'],
      ['b', 'us-east-1', 'arn:aws:sqs:us-east-1:000000000000:b'],
    ]);
  } finally {
    await close();
  }
});

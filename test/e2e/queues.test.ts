/** Queue lifecycle over the JSON protocol: create, look up, list, delete, purge, tags. */
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueUrlCommand,
  ListQueuesCommand,
  ListQueueTagsCommand,
  PurgeQueueCommand,
  SendMessageCommand,
  SetQueueAttributesCommand,
  TagQueueCommand,
  UntagQueueCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { useServerProcess, type ServerProcess } from '../support/server-process.js';
import {
  assertSqsError,
  attributes,
  counts,
  createQueue,
  invalidParameterValue,
  queueDoesNotExist,
} from './helpers.js';

let server: ServerProcess;
let sqs: SQSClient;

useServerProcess({ storage: 'memory', manualClock: true }, (s) => {
  server = s;
  sqs = s.client();
});

const alreadyExists = (attr: string) => ({
  name: 'QueueNameExists',
  code: 'QueueAlreadyExists',
  status: 400,
  message: `A queue already exists with the same name and a different value for attribute ${attr}`,
});

async function assertNoQueue(name: string): Promise<void> {
  await assertSqsError(sqs.send(new GetQueueUrlCommand({ QueueName: name })), queueDoesNotExist);
}

describe('CreateQueue', () => {
  test('returns the queue URL under the account id', async () => {
    const url = await createQueue(sqs, 'plain');
    assert.equal(url, `${server.url}/000000000000/plain`);
  });

  test('is idempotent with the same attributes, a subset of them, or none', async () => {
    const attrs = { DelaySeconds: '1', ReceiveMessageWaitTimeSeconds: '1', VisibilityTimeout: '20' };
    const url = await createQueue(sqs, 'idem', attrs);
    assert.equal(await createQueue(sqs, 'idem', attrs), url);
    assert.equal(await createQueue(sqs, 'idem', { DelaySeconds: '1' }), url);
    assert.equal(await createQueue(sqs, 'idem'), url);
    // A default the queue has is also "the same value".
    assert.equal(await createQueue(sqs, 'idem', { MessageRetentionPeriod: '345600' }), url);
  });

  test('QueueAlreadyExists when an attribute differs, compared with the current attributes', async () => {
    const url = await createQueue(sqs, 'differs', { ReceiveMessageWaitTimeSeconds: '1', DelaySeconds: '1' });
    await assertSqsError(
      createQueue(sqs, 'differs', { ReceiveMessageWaitTimeSeconds: '1', DelaySeconds: '2' }),
      alreadyExists('DelaySeconds'),
    );
    await assertSqsError(createQueue(sqs, 'differs', { VisibilityTimeout: '31' }), alreadyExists('VisibilityTimeout'));
    // The failed calls changed nothing.
    assert.equal((await attributes(sqs, url)).DelaySeconds, '1');
    await sqs.send(new SetQueueAttributesCommand({ QueueUrl: url, Attributes: { DelaySeconds: '2' } }));
    await assertSqsError(
      createQueue(sqs, 'differs', { ReceiveMessageWaitTimeSeconds: '1', DelaySeconds: '1' }),
      alreadyExists('DelaySeconds'),
    );
    assert.equal(await createQueue(sqs, 'differs', { DelaySeconds: '2' }), url);
  });

  test('stores tags given at creation', async () => {
    const QueueUrl = (
      await sqs.send(new CreateQueueCommand({ QueueName: 'tagged-at-birth', tags: { team: 'core', empty: '' } }))
    ).QueueUrl!;
    const { Tags } = await sqs.send(new ListQueueTagsCommand({ QueueUrl }));
    assert.deepEqual(Tags, { team: 'core', empty: '' });
  });

  test('rejects invalid names and creates nothing', async () => {
    for (const name of ['has space', 'queue/x/', 'a'.repeat(81), 'bad!', 'dot.name', '']) {
      await assertSqsError(createQueue(sqs, name), invalidParameterValue());
    }
    // 80 characters is the longest allowed name.
    const longest = 'b'.repeat(80);
    assert.equal(await createQueue(sqs, longest), `${server.url}/000000000000/${longest}`);
    const { QueueUrls } = await sqs.send(new ListQueuesCommand({ QueueNamePrefix: 'bad' }));
    assert.equal(QueueUrls, undefined);
  });

  test('a .fifo name needs FifoQueue=true, and FifoQueue=true needs a .fifo name', async () => {
    await assertSqsError(createQueue(sqs, 'std.fifo'), invalidParameterValue());
    await assertSqsError(createQueue(sqs, 'notfifo', { FifoQueue: 'true' }), invalidParameterValue());
    await assertNoQueue('std.fifo');
    await assertNoQueue('notfifo');
  });

  test('rejects unknown attributes and creates nothing', async () => {
    await assertSqsError(createQueue(sqs, 'unknown-attr', { VisibilityTimeout: '10', Foo: 'bar' }), {
      name: 'InvalidAttributeName',
      status: 400,
      message: 'Unknown Attribute Foo.',
    });
    await assertNoQueue('unknown-attr');
  });

  test('rejects FIFO-only attributes on a standard queue', async () => {
    const cases: Record<string, string>[] = [
      { ContentBasedDeduplication: 'true' },
      { DeduplicationScope: 'queue' },
      { FifoThroughputLimit: 'perQueue' },
      { FifoQueue: 'false' },
    ];
    for (const attrs of cases) {
      const [name] = Object.keys(attrs);
      // SQS names these two in its own words; the others are unknown to it.
      const message =
        name === 'DeduplicationScope' || name === 'FifoThroughputLimit'
          ? `You can specify the ${name} only when FifoQueue is set to true.`
          : `Unknown Attribute ${name}.`;
      await assertSqsError(createQueue(sqs, 'std-with-fifo-attr', attrs), {
        name: 'InvalidAttributeName',
        status: 400,
        message,
      });
    }
    await assertNoQueue('std-with-fifo-attr');
  });

  const ranges: [string, number, number][] = [
    ['DelaySeconds', 0, 900],
    ['MaximumMessageSize', 1024, 1_048_576],
    ['MessageRetentionPeriod', 60, 1_209_600],
    ['ReceiveMessageWaitTimeSeconds', 0, 20],
    ['VisibilityTimeout', 0, 43_200],
  ];
  for (const [attr, min, max] of ranges) {
    test(`${attr} must be within ${min}..${max}`, async () => {
      const name = `range-${attr}`;
      for (const bad of [String(min - 1), String(max + 1), 'abc', '1.5']) {
        await assertSqsError(createQueue(sqs, name, { [attr]: bad }), {
          name: 'InvalidAttributeValue',
          status: 400,
          message: `Invalid value for the parameter ${attr}.`,
        });
      }
      await assertNoQueue(name);
      const lowUrl = await createQueue(sqs, `${name}-min`, { [attr]: String(min) });
      assert.equal((await attributes(sqs, lowUrl, [attr]))[attr], String(min));
      const highUrl = await createQueue(sqs, `${name}-max`, { [attr]: String(max) });
      assert.equal((await attributes(sqs, highUrl, [attr]))[attr], String(max));
    });
  }
});

describe('GetQueueUrl', () => {
  test('finds an existing queue', async () => {
    const url = await createQueue(sqs, 'findme');
    const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: 'findme' }));
    assert.equal(QueueUrl, url);
  });

  test('QueueDoesNotExist for a missing queue', async () => {
    await assertNoQueue('never-created');
  });
});

describe('ListQueues', () => {
  before(async () => {
    for (const n of ['lq-a1', 'lq-a2', 'lq-b1', 'page-1', 'page-2', 'page-3', 'page-4', 'page-5'])
      await createQueue(sqs, n);
  });

  test('filters by prefix', async () => {
    const { QueueUrls } = await sqs.send(new ListQueuesCommand({ QueueNamePrefix: 'lq-a' }));
    assert.deepEqual(QueueUrls, [`${server.url}/000000000000/lq-a1`, `${server.url}/000000000000/lq-a2`]);
  });

  test('omits QueueUrls when nothing matches', async () => {
    const out = await sqs.send(new ListQueuesCommand({ QueueNamePrefix: 'zzz-none' }));
    assert.equal(out.QueueUrls, undefined);
    assert.equal(out.NextToken, undefined);
  });

  test('pages with MaxResults and NextToken', async () => {
    const pages: string[][] = [];
    let NextToken: string | undefined;
    do {
      const out = await sqs.send(new ListQueuesCommand({ QueueNamePrefix: 'page-', MaxResults: 2, NextToken }));
      pages.push(out.QueueUrls ?? []);
      NextToken = out.NextToken;
    } while (NextToken && pages.length < 10);
    assert.deepEqual(
      pages.map((p) => p.length),
      [2, 2, 1],
    );
    assert.deepEqual(
      pages.flat(),
      [1, 2, 3, 4, 5].map((i) => `${server.url}/000000000000/page-${i}`),
    );
  });

  test('no NextToken without MaxResults', async () => {
    const out = await sqs.send(new ListQueuesCommand({ QueueNamePrefix: 'page-' }));
    assert.equal(out.QueueUrls?.length, 5);
    assert.equal(out.NextToken, undefined);
  });

  test('rejects MaxResults outside 1..1000 and a forged NextToken', async () => {
    await assertSqsError(sqs.send(new ListQueuesCommand({ MaxResults: 0 })), invalidParameterValue(/MaxResults/));
    await assertSqsError(sqs.send(new ListQueuesCommand({ MaxResults: 1001 })), invalidParameterValue(/MaxResults/));
    await assertSqsError(
      sqs.send(new ListQueuesCommand({ MaxResults: 1, NextToken: 'not-a-token' })),
      invalidParameterValue(),
    );
  });
});

describe('DeleteQueue', () => {
  test('removes the queue and its messages; the URL then fails', async () => {
    const QueueUrl = await createQueue(sqs, 'doomed');
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'bye' }));
    await sqs.send(new DeleteQueueCommand({ QueueUrl }));
    await assertNoQueue('doomed');
    await assertSqsError(sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'x' })), queueDoesNotExist);
    await assertSqsError(sqs.send(new DeleteQueueCommand({ QueueUrl })), queueDoesNotExist);
    const { QueueUrls } = await sqs.send(new ListQueuesCommand({ QueueNamePrefix: 'doomed' }));
    assert.equal(QueueUrls, undefined);
  });
});

describe('PurgeQueue', () => {
  test('deletes every message, then refuses another purge for 60 seconds', async () => {
    const QueueUrl = await createQueue(sqs, 'purged');
    for (let i = 0; i < 3; i++) await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: `m${i}` }));
    await sqs.send(new PurgeQueueCommand({ QueueUrl }));
    assert.deepEqual(await counts(sqs, QueueUrl), { visible: 0, inflight: 0, delayed: 0 });

    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'after' }));
    const inProgress = {
      name: 'PurgeQueueInProgress',
      code: 'AWS.SimpleQueueService.PurgeQueueInProgress',
      status: 403,
      message: 'Only one PurgeQueue operation on purged is allowed every 60 seconds.',
    };
    await assertSqsError(sqs.send(new PurgeQueueCommand({ QueueUrl })), inProgress);
    // The refused purge deleted nothing.
    assert.equal((await counts(sqs, QueueUrl)).visible, 1);
    await server.advanceClock(59_000);
    await assertSqsError(sqs.send(new PurgeQueueCommand({ QueueUrl })), inProgress);
    await server.advanceClock(1_000);
    await sqs.send(new PurgeQueueCommand({ QueueUrl }));
    assert.equal((await counts(sqs, QueueUrl)).visible, 0);
  });

  test('QueueDoesNotExist for a missing queue', async () => {
    await assertSqsError(
      sqs.send(new PurgeQueueCommand({ QueueUrl: `${server.url}/000000000000/no-such` })),
      queueDoesNotExist,
    );
  });
});

describe('tags', () => {
  test('TagQueue adds and overwrites, keys are case-sensitive, UntagQueue removes', async () => {
    const QueueUrl = await createQueue(sqs, 'tags');
    assert.equal((await sqs.send(new ListQueueTagsCommand({ QueueUrl }))).Tags, undefined);
    await sqs.send(new TagQueueCommand({ QueueUrl, Tags: { MyTag: 'a', mytag: 'b', keep: 'k' } }));
    await sqs.send(new TagQueueCommand({ QueueUrl, Tags: { MyTag: 'A2', empty: '' } }));
    assert.deepEqual((await sqs.send(new ListQueueTagsCommand({ QueueUrl }))).Tags, {
      MyTag: 'A2',
      mytag: 'b',
      keep: 'k',
      empty: '',
    });
    await sqs.send(new UntagQueueCommand({ QueueUrl, TagKeys: ['mytag', 'not-there'] }));
    assert.deepEqual((await sqs.send(new ListQueueTagsCommand({ QueueUrl }))).Tags, {
      MyTag: 'A2',
      keep: 'k',
      empty: '',
    });
    await sqs.send(new UntagQueueCommand({ QueueUrl, TagKeys: ['MyTag', 'keep', 'empty'] }));
    assert.equal((await sqs.send(new ListQueueTagsCommand({ QueueUrl }))).Tags, undefined);
  });

  test('more than 50 tags is rejected and nothing is applied', async () => {
    const QueueUrl = await createQueue(sqs, 'too-many-tags');
    await sqs.send(new TagQueueCommand({ QueueUrl, Tags: { first: '1' } }));
    const many = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, 'v']));
    await assertSqsError(sqs.send(new TagQueueCommand({ QueueUrl, Tags: many })), invalidParameterValue());
    assert.deepEqual((await sqs.send(new ListQueueTagsCommand({ QueueUrl }))).Tags, { first: '1' });
  });

  test('QueueDoesNotExist for tag actions on a missing queue', async () => {
    const QueueUrl = `${server.url}/000000000000/no-such-tags`;
    await assertSqsError(sqs.send(new TagQueueCommand({ QueueUrl, Tags: { a: 'b' } })), queueDoesNotExist);
    await assertSqsError(sqs.send(new UntagQueueCommand({ QueueUrl, TagKeys: ['a'] })), queueDoesNotExist);
    await assertSqsError(sqs.send(new ListQueueTagsCommand({ QueueUrl })), queueDoesNotExist);
  });
});

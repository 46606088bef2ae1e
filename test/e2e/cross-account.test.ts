/**
 * The cross-account suite: for every action that takes a queue URL, an ARN or
 * imported metadata, account A can neither read, write, move nor learn anything about
 * account B's queues beyond what AWS itself answers: AccessDenied for a queue that
 * exists, NonExistentQueue for one that does not (URLs); for ARNs, the same "does not
 * exist" whether B's queue exists or not. A grant in B's queue Policy still works.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { A, arnOf, B, useTwoAccounts, type Answer, type TwoAccounts } from './cross-account-helpers.js';

/** Every action that names a queue by URL, with an input that would otherwise succeed or fail only later. */
function urlActions(receipt: string): [string, Record<string, unknown>][] {
  return [
    ['SendMessage', { MessageBody: 'x' }],
    ['SendMessageBatch', { Entries: [{ Id: '1', MessageBody: 'x' }] }],
    ['ReceiveMessage', { MaxNumberOfMessages: 10 }],
    ['DeleteMessage', { ReceiptHandle: receipt }],
    ['DeleteMessageBatch', { Entries: [{ Id: '1', ReceiptHandle: receipt }] }],
    ['ChangeMessageVisibility', { ReceiptHandle: receipt, VisibilityTimeout: 0 }],
    ['ChangeMessageVisibilityBatch', { Entries: [{ Id: '1', ReceiptHandle: receipt, VisibilityTimeout: 0 }] }],
    ['GetQueueAttributes', { AttributeNames: ['All'] }],
    ['SetQueueAttributes', { Attributes: { DelaySeconds: '7' } }],
    ['PurgeQueue', {}],
    ['DeleteQueue', {}],
    ['TagQueue', { Tags: { owner: 'a' } }],
    ['UntagQueue', { TagKeys: ['team'] }],
    ['ListQueueTags', {}],
    ['AddPermission', { Label: 'mine', AWSAccountIds: [A.accountId], Actions: ['ReceiveMessage'] }],
    ['RemovePermission', { Label: 'mine' }],
    ['ListDeadLetterSourceQueues', {}],
    // Redrive's extensions (docs/extensions.md).
    ['PeekMessages', { MaxResults: 10 }],
    ['RejectMessage', { ReceiptHandle: receipt }],
    ['DeleteMessagesById', { MessageIds: ['00000000-0000-0000-0000-000000000000'] }],
    ['GetDeadLetterBreakdown', {}],
    ['GetQueueActivity', {}],
  ];
}

const shape = (r: Answer) => ({ status: r.status, code: r.code, message: r.message });

describe('cross-account: A against B', () => {
  let t: TwoAccounts;
  useTwoAccounts((x) => (t = x));
  let receipt: string;
  let bQueue: string;
  let bTask: string;

  before(async () => {
    bQueue = (await t.ok(B, 'CreateQueue', { QueueName: 'b-q', tags: { team: 'b' } })).QueueUrl;
    await t.ok(B, 'CreateQueue', { QueueName: 'b-dlq', Attributes: { MessageRetentionPeriod: '600' } });
    await t.ok(B, 'CreateQueue', {
      QueueName: 'b-src',
      Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arnOf(B, 'b-dlq'), maxReceiveCount: 1 }) },
    });
    await t.ok(B, 'SendMessage', { QueueUrl: bQueue, MessageBody: 'b-secret' });
    receipt = (await t.ok(B, 'ReceiveMessage', { QueueUrl: bQueue, VisibilityTimeout: 0 })).Messages[0].ReceiptHandle;
    bTask = (await t.ok(B, 'StartMessageMoveTask', { SourceArn: arnOf(B, 'b-dlq'), MaxNumberOfMessagesPerSecond: 1 }))
      .TaskHandle;
    await t.ok(A, 'CreateQueue', { QueueName: 'a-dlq' });
    await t.ok(A, 'CreateQueue', {
      QueueName: 'a-src',
      Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arnOf(A, 'a-dlq'), maxReceiveCount: 1 }) },
    });
  });

  test("every URL action on B's queue is AccessDenied; on a queue B does not have, NonExistentQueue, as AWS answers", async () => {
    for (const [action, input] of urlActions(receipt)) {
      const denied = await t.call(A, action, { QueueUrl: bQueue, ...input });
      assert.deepEqual(
        shape(denied),
        { status: 403, code: 'AccessDenied', message: `Access to the resource ${bQueue} is denied.` },
        action,
      );
      const missing = await t.call(A, action, { QueueUrl: t.urlOf(B, 'nope'), ...input });
      assert.deepEqual(
        shape(missing),
        {
          status: 400,
          code: 'AWS.SimpleQueueService.NonExistentQueue',
          message: 'The specified queue does not exist.',
        },
        action,
      );
    }
  });

  test("GetQueueUrl with QueueOwnerAWSAccountId: B's queue is AccessDenied, a missing one NonExistentQueue", async () => {
    assert.equal(
      (await t.call(A, 'GetQueueUrl', { QueueName: 'b-q', QueueOwnerAWSAccountId: B.accountId })).code,
      'AccessDenied',
    );
    assert.equal(
      (await t.call(A, 'GetQueueUrl', { QueueName: 'nope', QueueOwnerAWSAccountId: B.accountId })).code,
      'AWS.SimpleQueueService.NonExistentQueue',
    );
  });

  test("move tasks by ARN: B's queues answer exactly as queues that do not exist", async () => {
    const pairs: [string, Record<string, unknown>, Record<string, unknown>][] = [
      ['StartMessageMoveTask', { SourceArn: arnOf(B, 'b-dlq') }, { SourceArn: arnOf(B, 'nope') }],
      [
        'StartMessageMoveTask',
        { SourceArn: arnOf(B, 'b-dlq'), DryRun: true },
        { SourceArn: arnOf(B, 'nope'), DryRun: true },
      ],
      [
        'StartMessageMoveTask',
        { SourceArn: arnOf(A, 'a-dlq'), DestinationArn: arnOf(B, 'b-q') },
        { SourceArn: arnOf(A, 'a-dlq'), DestinationArn: arnOf(B, 'nope') },
      ],
      ['ListMessageMoveTasks', { SourceArn: arnOf(B, 'b-dlq') }, { SourceArn: arnOf(B, 'nope') }],
      [
        'CancelMessageMoveTask',
        { TaskHandle: bTask },
        { TaskHandle: Buffer.from(JSON.stringify({ taskId: 'x', sourceArn: arnOf(B, 'nope') })).toString('base64') },
      ],
    ];
    for (const [action, real, missing] of pairs) {
      const r = await t.call(A, action, real);
      assert.equal(r.code, 'ResourceNotFoundException', `${action} ${JSON.stringify(real)}`);
      assert.deepEqual(shape(r), shape(await t.call(A, action, missing)), action);
    }
    // B's task id under A's own DLQ: no such task for A.
    const { taskId } = JSON.parse(Buffer.from(bTask, 'base64').toString()) as { taskId: string };
    const stolen = Buffer.from(JSON.stringify({ taskId, sourceArn: arnOf(A, 'a-dlq') })).toString('base64');
    assert.deepEqual(shape(await t.call(A, 'CancelMessageMoveTask', { TaskHandle: stolen })), {
      status: 404,
      code: 'ResourceNotFoundException',
      message: 'Task does not exist.',
    });
  });

  test("a RedrivePolicy naming B's DLQ is refused alike whether it exists or not, on create and on set", async () => {
    for (const target of [arnOf(B, 'b-dlq'), arnOf(B, 'nope')]) {
      const RedrivePolicy = JSON.stringify({ deadLetterTargetArn: target, maxReceiveCount: 1 });
      const created = await t.call(A, 'CreateQueue', { QueueName: 'a-new', Attributes: { RedrivePolicy } });
      assert.equal(created.code, 'InvalidParameterValue');
      assert.match(created.message!, /Dead-letter target owner should be same as the source/);
      const set = await t.call(A, 'SetQueueAttributes', {
        QueueUrl: t.urlOf(A, 'a-src'),
        Attributes: { RedrivePolicy },
      });
      assert.deepEqual(shape(set), { ...shape(created) }, 'the same answer on set');
    }
    assert.equal(
      (await t.call(A, 'GetQueueUrl', { QueueName: 'a-new' })).code,
      'AWS.SimpleQueueService.NonExistentQueue',
      'nothing half-created',
    );
  });

  test("imported metadata cannot name B's queues; listings and summaries show only A's", async () => {
    const r = await t.call(A, 'SendMessage', {
      QueueUrl: t.urlOf(A, 'a-dlq'),
      MessageBody: 'x',
      MessageSystemAttributes: { DeadLetterQueueSourceArn: { DataType: 'String', StringValue: arnOf(B, 'b-q') } },
    });
    assert.equal(r.code, 'InvalidParameterValue');
    const history = [
      { queue: 'b-q', queueArn: arnOf(B, 'b-q'), reason: 'rejected', count: 1, firstTime: 1, lastTime: 1 },
    ];
    // A history is a record for people: it routes nothing, so A may keep one that names anyone.
    await t.ok(A, 'SendMessage', {
      QueueUrl: t.urlOf(A, 'a-dlq'),
      MessageBody: 'h',
      MessageSystemAttributes: { RedriveDeathHistory: { DataType: 'String', StringValue: JSON.stringify(history) } },
    });
    const { QueueUrls } = await t.ok(A, 'ListQueues', {});
    assert.ok(
      QueueUrls.every((u: string) => u.includes(`/${A.accountId}/`)),
      "only A's queues",
    );
    assert.equal((await t.ok(A, 'ListQueues', { QueueNamePrefix: 'b-' })).QueueUrls, undefined);
    const summaries = await t.ok(A, 'ListQueueSummaries', { AllRegions: true });
    assert.ok(JSON.stringify(summaries).indexOf(B.accountId) < 0, 'no trace of B in the summaries');
    const dry = await t.ok(A, 'StartMessageMoveTask', {
      SourceArn: arnOf(A, 'a-dlq'),
      DryRun: true,
      Filter: { DeadLetterQueueSourceArn: arnOf(B, 'b-q') },
    });
    assert.equal(dry.ApproximateNumberOfMessagesToMove, 0);
  });

  test("after all of it, B's queues are as B left them", async () => {
    const attrs = (await t.ok(B, 'GetQueueAttributes', { QueueUrl: bQueue, AttributeNames: ['All'] })).Attributes;
    assert.equal(attrs.DelaySeconds, '0');
    assert.equal(attrs.Policy, undefined);
    assert.equal(attrs.ApproximateNumberOfMessages, '1');
    assert.deepEqual((await t.ok(B, 'ListQueueTags', { QueueUrl: bQueue })).Tags, { team: 'b' });
    const [m] = (await t.ok(B, 'PeekMessages', { QueueUrl: bQueue })).Messages;
    assert.equal(m.Body, 'b-secret');
    assert.equal(m.Attributes.SenderId, B.accountId);
  });

  test("what B's Policy grants A works, and nothing more", async () => {
    const url = (await t.ok(B, 'CreateQueue', { QueueName: 'b-shared' })).QueueUrl;
    await t.ok(B, 'AddPermission', {
      QueueUrl: url,
      Label: 'a-worker',
      AWSAccountIds: [A.accountId],
      Actions: ['SendMessage', 'ReceiveMessage', 'DeleteMessage', 'GetQueueAttributes', 'GetQueueUrl'],
    });
    assert.equal(
      (await t.ok(A, 'GetQueueUrl', { QueueName: 'b-shared', QueueOwnerAWSAccountId: B.accountId })).QueueUrl,
      url,
    );
    await t.ok(A, 'SendMessage', { QueueUrl: url, MessageBody: 'work' });
    await t.ok(A, 'SendMessageBatch', { QueueUrl: url, Entries: [{ Id: '1', MessageBody: 'more' }] });
    const { Messages } = await t.ok(A, 'ReceiveMessage', { QueueUrl: url, MaxNumberOfMessages: 10 });
    assert.equal(Messages.length, 2);
    await t.ok(A, 'DeleteMessageBatch', {
      QueueUrl: url,
      Entries: Messages.map((m: { ReceiptHandle: string }, i: number) => ({
        Id: String(i),
        ReceiptHandle: m.ReceiptHandle,
      })),
    });
    assert.equal(
      (await t.ok(A, 'GetQueueAttributes', { QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessages'] }))
        .Attributes.ApproximateNumberOfMessages,
      '0',
    );
    for (const [action, input] of [
      ['PurgeQueue', {}],
      ['DeleteQueue', {}],
      ['SetQueueAttributes', { Attributes: { DelaySeconds: '1' } }],
      ['PeekMessages', {}],
      ['AddPermission', { Label: 'more', AWSAccountIds: [A.accountId], Actions: ['PurgeQueue'] }],
    ] as const) {
      assert.equal((await t.call(A, action, { QueueUrl: url, ...input })).code, 'AccessDenied', action);
    }
    // A grant covers API calls on that queue only: a move task is still its owner's, in its owner's account.
    assert.equal(
      (await t.call(A, 'StartMessageMoveTask', { SourceArn: arnOf(A, 'a-dlq'), DestinationArn: arnOf(B, 'b-shared') }))
        .code,
      'ResourceNotFoundException',
    );
  });
});

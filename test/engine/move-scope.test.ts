/**
 * At the engine: a move task never writes outside its owner's account and region or into
 * a queue of the other type, whatever source ARN a message carries (here written to the
 * store directly, past the import check, as data kept from an older version could be), and
 * the import extension refuses such ARNs, and any restore by another account's sender.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { dispatch } from '../../src/engine/actions/registry.js';
import type { RequestContext } from '../../src/engine/kernel/types.js';
import { ctx, settle, testEngine } from './support.js';

const B: RequestContext = { ...ctx, accountId: '222222222222' };
const arnOf = (c: RequestContext, name: string) => `arn:aws:sqs:${c.region}:${c.accountId}:${name}`;
const source = (arn: string) => ({ DeadLetterQueueSourceArn: { DataType: 'String', StringValue: arn } });

async function setUp() {
  const t = testEngine();
  // dispatch sets the action on the context, which access checks need.
  const as = (c: RequestContext) => (action: string, input: Record<string, unknown>) =>
    dispatch(t.engine, { ...c }, action, input) as Promise<Record<string, any>>;
  const { QueueUrl: dlqUrl } = await t.call('CreateQueue', { QueueName: 'a-dlq' });
  const { QueueUrl: srcUrl } = await t.call('CreateQueue', {
    QueueName: 'a-src',
    Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arnOf(ctx, 'a-dlq'), maxReceiveCount: 1 }) },
  });
  const { QueueUrl: secretUrl } = await as(B)('CreateQueue', { QueueName: 'b-secret' });
  const { QueueUrl: secretFifoUrl } = await as(B)('CreateQueue', {
    QueueName: 'b-secret.fifo',
    Attributes: { FifoQueue: 'true' },
  });
  const dlq = (await t.engine.store.queues.get({ accountId: ctx.accountId, region: ctx.region, name: 'a-dlq' }))!;
  /** Writes a message into a-dlq with whatever source it is given, as data stored before this check would be. */
  const stored = (body: string, deadLetterSourceArn: string) =>
    t.engine.store.messages.send(dlq.id, [
      {
        messageId: randomUUID(),
        body,
        md5OfBody: 'x',
        senderId: ctx.accountId,
        sentAt: t.clock.now(),
        visibleAt: t.clock.now(),
        deadLetterSourceArn,
      },
    ]);
  const depth = async (c: RequestContext, url: string) =>
    (await as(c)('PeekMessages', { QueueUrl: url })).Messages.length;
  const redrive = async () => {
    await t.call('StartMessageMoveTask', { SourceArn: arnOf(ctx, 'a-dlq') });
    t.engine.moveTasks.start();
    for (let i = 0; i < 100; i++) {
      const {
        Results: [task],
      } = await t.call('ListMessageMoveTasks', { SourceArn: arnOf(ctx, 'a-dlq') });
      if (task.Status !== 'RUNNING') return task;
      await settle();
    }
    throw new Error('the task did not end');
  };
  return { t, as, dlqUrl, srcUrl, secretUrl, secretFifoUrl, stored, depth, redrive };
}

for (const [what, target] of [
  ['a standard', 'b-secret'],
  ['a FIFO', 'b-secret.fifo'],
]) {
  test(`a stored source ARN naming ${what} queue of another account fails the redrive there; nothing reaches it`, async () => {
    const s = await setUp();
    try {
      await s.stored('home', arnOf(ctx, 'a-src'));
      await s.stored('forged', arnOf(B, target!));
      const task = await s.redrive();
      assert.equal(task.Status, 'FAILED');
      assert.equal(task.FailureReason, 'AWS.SimpleQueueService.NonExistentQueue');
      assert.equal(task.ApproximateNumberOfMessagesMoved, 1);
      assert.equal(await s.depth(ctx, s.srcUrl), 1, 'the genuine message went home');
      assert.equal((await s.depth(B, s.secretUrl)) + (await s.depth(B, s.secretFifoUrl)), 0, "nothing in B's queues");
      const { Messages } = await s.t.call('PeekMessages', { QueueUrl: s.dlqUrl });
      assert.deepEqual(
        Messages.map((m: { Body: string }) => m.Body),
        ['forged'],
        'the refused message stays in the DLQ',
      );
    } finally {
      await s.t.close();
    }
  });
}

test("a stored source ARN naming the owner's own queue of the other type, or in another region, is refused too", async () => {
  const s = await setUp();
  try {
    await s.t.call('CreateQueue', { QueueName: 'a-src.fifo', Attributes: { FifoQueue: 'true' } });
    await s.stored('wrong type', arnOf(ctx, 'a-src.fifo'));
    const task = await s.redrive();
    assert.equal(task.Status, 'FAILED');
    assert.equal(task.ApproximateNumberOfMessagesMoved, 0);
    const s2 = await setUp();
    try {
      await s2.stored('other region', `arn:aws:sqs:eu-west-1:${ctx.accountId}:a-src`);
      assert.equal((await s2.redrive()).Status, 'FAILED');
      assert.equal(await s2.depth(ctx, s2.srcUrl), 0);
    } finally {
      await s2.t.close();
    }
  } finally {
    await s.t.close();
  }
});

test("the import refuses a source ARN outside the queue's account, region or type, with the reason", async () => {
  const s = await setUp();
  try {
    const cases: [string, RegExp][] = [
      [arnOf(B, 'b-secret'), /must name a queue of this queue's account \(000000000000\) and region \(us-east-1\)/],
      [`arn:aws:sqs:eu-west-1:${ctx.accountId}:a-src`, /account \(000000000000\) and region \(us-east-1\)/],
      [arnOf(ctx, 'a-src.fifo'), /must name a standard queue, as this queue is/],
    ];
    for (const [arn, message] of cases) {
      await assert.rejects(
        s.t.call('SendMessage', { QueueUrl: s.dlqUrl, MessageBody: 'x', MessageSystemAttributes: source(arn) }),
        (e: Error & { code?: string }) => e.code === 'InvalidParameterValue' && message.test(e.message),
        arn,
      );
    }
    await s.t.call('SendMessage', {
      QueueUrl: s.dlqUrl,
      MessageBody: 'mine',
      MessageSystemAttributes: source(arnOf(ctx, 'a-src')),
    });
    assert.equal(await s.depth(ctx, s.dlqUrl), 1, 'only the valid import was stored');
  } finally {
    await s.t.close();
  }
});

test('a sender from another account, granted SendMessage, cannot restore dead-letter metadata: to it the attributes do not exist', async () => {
  const s = await setUp();
  try {
    await s.t.call('AddPermission', {
      QueueUrl: s.dlqUrl,
      Label: 'b-sends',
      AWSAccountIds: [B.accountId],
      Actions: ['SendMessage'],
    });
    await s.as(B)('SendMessage', { QueueUrl: s.dlqUrl, MessageBody: 'granted' });
    const history = JSON.stringify([
      { queue: 'a-src', queueArn: arnOf(ctx, 'a-src'), reason: 'rejected', count: 1, firstTime: 1, lastTime: 1 },
    ]);
    for (const [name, attrs] of [
      ['DeadLetterQueueSourceArn', source(arnOf(ctx, 'a-src'))],
      ['RedriveDeathHistory', { RedriveDeathHistory: { DataType: 'String', StringValue: history } }],
    ] as const) {
      await assert.rejects(
        s.as(B)('SendMessage', { QueueUrl: s.dlqUrl, MessageBody: 'x', MessageSystemAttributes: attrs }),
        { code: 'InvalidParameterValue', message: `Message system attribute name '${name}' is invalid.` },
      );
    }
    assert.equal(await s.depth(ctx, s.dlqUrl), 1);
  } finally {
    await s.t.close();
  }
});

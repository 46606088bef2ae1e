/** Sending with RedriveDeathHistory and DeadLetterQueueSourceArn (restored-deaths.ts): what `redrive messages import` restores. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testEngine } from './support.js';

const ARN = 'arn:aws:sqs:us-east-1:000000000000:orders';
const history = [
  {
    queue: 'orders',
    queueArn: ARN,
    reason: 'rejected',
    count: 2,
    firstTime: 1000,
    lastTime: 2000,
    rejectReason: 'bad schema',
  },
  {
    queue: 'orders',
    queueArn: ARN,
    reason: 'expired',
    count: 1,
    firstTime: 500,
    lastTime: 500,
    originalTtlSeconds: 60,
  },
];
const restore = (h: unknown, source = ARN) => ({
  RedriveDeathHistory: { DataType: 'String', StringValue: typeof h === 'string' ? h : JSON.stringify(h) },
  DeadLetterQueueSourceArn: { DataType: 'String', StringValue: source },
});

test('a send restores the history and the source; they read back as from a real dead-lettering, and a redrive returns the message', async () => {
  const { call, close } = testEngine();
  try {
    const { QueueUrl: dlq } = await call('CreateQueue', { QueueName: 'orders-dlq' });
    await call('CreateQueue', {
      QueueName: 'orders',
      Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: `${ARN}-dlq`, maxReceiveCount: 5 }) },
    });
    await call('SendMessage', { QueueUrl: dlq, MessageBody: 'replayed', MessageSystemAttributes: restore(history) });
    const {
      Messages: [m],
    } = await call('PeekMessages', { QueueUrl: dlq });
    assert.deepEqual(m.DeathHistory, history);
    assert.equal(m.Attributes.DeadLetterQueueSourceArn, ARN);
    assert.deepEqual([m.FirstDeath.reason, m.LastDeath.reason], ['expired', 'rejected']);
    const {
      Messages: [all],
    } = await call('ReceiveMessage', { QueueUrl: dlq, MessageSystemAttributeNames: ['All'], VisibilityTimeout: 0 });
    assert.equal(
      all.Attributes.RedriveDeathHistory,
      undefined,
      'not stored as a plain system attribute, which All would return',
    );
    const {
      Messages: [r],
    } = await call('ReceiveMessage', {
      QueueUrl: dlq,
      MessageSystemAttributeNames: ['RedriveLastDeathReason'],
      VisibilityTimeout: 0,
    });
    assert.equal(r.Attributes.RedriveLastDeathReason, 'rejected');
    const dry = await call('StartMessageMoveTask', {
      SourceArn: 'arn:aws:sqs:us-east-1:000000000000:orders-dlq',
      DryRun: true,
    });
    assert.equal(dry.ApproximateNumberOfMessagesToMove, 1, 'it has a source to return to');
  } finally {
    await close();
  }
});

test('a bad history or source is refused with InvalidParameterValue naming what is wrong, and nothing is stored', async () => {
  const { call, close } = testEngine();
  try {
    const { QueueUrl } = await call('CreateQueue', { QueueName: 'q' });
    const cases: [unknown, RegExp, string?][] = [
      ['not json', /must be a JSON array/],
      [{ a: 1 }, /must be a JSON array/],
      [[{ ...history[0], reason: 'tired' }], /entry 0: reason must be one of/],
      [[{ ...history[0], count: 0 }], /entry 0: count must be/],
      [[{ ...history[0], firstTime: 3000 }], /firstTime first/],
      [[{ ...history[0], queue: 'other' }], /entry 0 needs queueArn/],
      [[{ ...history[0], colour: 'red' }], /unknown field colour/],
      [[history[0], history[0]], /entry 1 repeats/],
      [
        Array.from({ length: 101 }, (_, i) => ({ ...history[0], queue: `q${i}`, queueArn: `${ARN}${i}` })),
        /at most 100/,
      ],
      [history, /must be a queue ARN/, 'orders'],
    ];
    for (const [h, message, source] of cases) {
      await assert.rejects(
        call('SendMessage', { QueueUrl, MessageBody: 'x', MessageSystemAttributes: restore(h, source) }),
        (e: Error & { code?: string }) => e.code === 'InvalidParameterValue' && message.test(e.message),
        String(message),
      );
    }
    const { Messages } = await call('PeekMessages', { QueueUrl });
    assert.equal(Messages.length, 0);
  } finally {
    await close();
  }
});

import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { ctx, testEngine } from './support.js';

const arn = (name: string) => `arn:aws:sqs:${ctx.region}:${ctx.accountId}:${name}`;

describe('move task limits', () => {
  // The runner is not started, so every task stays RUNNING.
  const t = testEngine();
  after(() => t.close());

  test('at most 100 active tasks per account; a cancelled one frees a place', async () => {
    const handles: string[] = [];
    for (let i = 0; i <= 100; i++) {
      await t.call('CreateQueue', { QueueName: `dlq-${i}` });
      await t.call('CreateQueue', {
        QueueName: `src-${i}`,
        Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arn(`dlq-${i}`), maxReceiveCount: 1 }) },
      });
    }
    for (let i = 0; i < 100; i++)
      handles.push((await t.call('StartMessageMoveTask', { SourceArn: arn(`dlq-${i}`) })).TaskHandle);
    await assert.rejects(t.call('StartMessageMoveTask', { SourceArn: arn('dlq-100') }), {
      code: 'OverLimit',
      status: 403,
    });
    await t.call('CancelMessageMoveTask', { TaskHandle: handles[0] });
    assert.ok((await t.call('StartMessageMoveTask', { SourceArn: arn('dlq-100') })).TaskHandle);
  });
});

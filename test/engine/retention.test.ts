import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { testEngine } from './support.js';

describe('retention and purge on the injected clock', () => {
  const t = testEngine();
  after(() => t.close());

  test('messages older than MessageRetentionPeriod are not received and are swept', async () => {
    const { QueueUrl } = await t.call('CreateQueue', {
      QueueName: 'ret',
      Attributes: { MessageRetentionPeriod: '60' },
    });
    await t.call('SendMessage', { QueueUrl, MessageBody: 'old' });
    t.clock.advance(30_000);
    await t.call('SendMessage', { QueueUrl, MessageBody: 'young' });
    t.clock.advance(30_001);
    const r = await t.call('ReceiveMessage', { QueueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 0 });
    assert.deepEqual(
      r.Messages.map((m: { Body: string }) => m.Body),
      ['young'],
    );
    assert.equal(await t.engine.sweeps.retention(), 1);
    const attrs = await t.call('GetQueueAttributes', { QueueUrl, AttributeNames: ['ApproximateNumberOfMessages'] });
    assert.equal(attrs.Attributes.ApproximateNumberOfMessages, '1');
  });

  test('a retention change applies to messages already in the queue', async () => {
    const { QueueUrl } = await t.call('CreateQueue', { QueueName: 'ret2' });
    await t.call('SendMessage', { QueueUrl, MessageBody: 'a' });
    t.clock.advance(120_000);
    await t.call('SetQueueAttributes', { QueueUrl, Attributes: { MessageRetentionPeriod: '60' } });
    assert.deepEqual(await t.call('ReceiveMessage', { QueueUrl }), {});
  });

  test('PurgeQueue is allowed once per 60 seconds', async () => {
    const { QueueUrl } = await t.call('CreateQueue', { QueueName: 'purge' });
    await t.call('PurgeQueue', { QueueUrl });
    await assert.rejects(t.call('PurgeQueue', { QueueUrl }), {
      code: 'AWS.SimpleQueueService.PurgeQueueInProgress',
      status: 403,
    });
    t.clock.advance(60_000);
    await t.call('PurgeQueue', { QueueUrl });
  });
});

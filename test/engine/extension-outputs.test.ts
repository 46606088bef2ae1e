/**
 * Every member Redrive's extensions answer is in the Query protocol's model
 * (src/protocols/query/redrive-extensions.json): the Query encoder writes only what the
 * model names, so a member the model lacks would reach JSON clients and silently not
 * Query ones. The few JSON-only members are listed, as docs/extensions.md lists them.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { queryOperation, resolve, type Shape } from '../../src/protocols/query/model.js';
import { settle, testEngine } from './support.js';

/** Members docs/extensions.md says only JSON answers carry. */
const JSON_ONLY = ['PeekMessages.Messages[].Amqp', 'ListMessageMoveTasks.Results[].Filter'];

/** The paths of `value`'s members that `shape` does not name, as `Action.Member[].Member`. */
function unmodelled(shape: Shape, value: unknown, path: string): string[] {
  if (value === undefined || value === null) return [];
  if (shape.type === 'structure') {
    return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) => {
      const ref = shape.members?.[k];
      return ref ? unmodelled(resolve(ref), v, `${path}.${k}`) : [`${path}.${k}`];
    });
  }
  if (shape.type === 'list')
    return (value as unknown[]).flatMap((v) => unmodelled(resolve(shape.member!), v, `${path}[]`));
  if (shape.type === 'map')
    return Object.values(value as object).flatMap((v) => unmodelled(resolve(shape.value!), v, `${path}{}`));
  return [];
}

const outputShape = (action: string) => queryOperation(action)?.output ?? { type: 'structure', members: {} };

test('the check finds a member the model lacks', () => {
  assert.deepEqual(
    unmodelled(outputShape('GetQueueActivity'), { Minutes: [{ Timestamp: 1, Extra: 2 }] }, 'GetQueueActivity'),
    ['GetQueueActivity.Minutes[].Extra'],
  );
});

test('what the extension actions answer is in the Query model', async () => {
  const { clock, call, close } = testEngine();
  const dlq = (await call('CreateQueue', { QueueName: 'orders-dlq' })).QueueUrl as string;
  const dlqArn = 'arn:aws:sqs:us-east-1:000000000000:orders-dlq';
  const source = (
    await call('CreateQueue', {
      QueueName: 'orders',
      Attributes: {
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 1 }),
        RedriveMessageTtlSeconds: '600',
      },
    })
  ).QueueUrl as string;
  await call('CreateQueue', {
    QueueName: 'amqp-source',
    Attributes: { RedriveDeadLetterExchange: 'dlx', RedriveDeadLetterRoutingKey: 'dead' },
  });
  await call('SendMessage', {
    QueueUrl: source,
    MessageBody: '{"order":2}',
    MessageAttributes: { kind: { DataType: 'String', StringValue: 'refund' } },
  });
  await call('SendMessage', { QueueUrl: source, MessageBody: 'b' });
  for (const m of (await call('ReceiveMessage', { QueueUrl: source, MaxNumberOfMessages: 10 })).Messages) {
    await call('RejectMessage', { QueueUrl: source, ReceiptHandle: m.ReceiptHandle, Reason: 'schema v1' });
  }
  await settle();
  clock.advance(1_000);
  const peeked = (await call('PeekMessages', { QueueUrl: dlq })).Messages as { MessageId: string }[];
  assert.equal(peeked.length, 2);
  const answers: [string, Record<string, unknown>][] = [
    ['ListQueueSummaries', {}],
    ['ListQueueSummaries', { SortBy: 'Visible', IncludeDeadLetterQueues: true }],
    ['PeekMessages', { QueueUrl: dlq }],
    ['PeekMessages', { QueueUrl: dlq, CountOnly: true, Filter: { DeathReason: 'rejected' } }],
    ['GetDeadLetterBreakdown', { QueueUrl: dlq }],
    ['GetQueueActivity', { QueueUrl: dlq }],
    ['StartMessageMoveTask', { SourceArn: dlqArn, DryRun: true }],
    ['DeleteMessagesById', { QueueUrl: dlq, MessageIds: [peeked[0]!.MessageId, 'no-such-message'] }],
    ['MoveMessagesById', { QueueUrl: dlq, MessageIds: [peeked[1]!.MessageId, 'no-such-message'] }],
  ];
  const found: string[] = [];
  for (const [action, input] of answers) {
    const output = await call(action, input);
    assert.ok(Object.keys(output).length > 0, `${action} answered something`);
    found.push(...unmodelled(outputShape(action), output, action));
  }
  assert.deepEqual(
    [...new Set(found)].filter((p) => !JSON_ONLY.includes(p)),
    [],
  );
  await close();
});

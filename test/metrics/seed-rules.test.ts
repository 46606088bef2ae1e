/**
 * The seed's two metric rules on the engine's manual clock: a dead-letter move is not a
 * send on the dead-letter queue (a direct send is), and the oldest age of a standard DLQ
 * counts from the original send while a FIFO DLQ counts from the move.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { dispatch } from '../../src/engine/actions/registry.js';
import { ManualClock } from '../../src/engine/kernel/clock.js';
import { Engine } from '../../src/engine/engine.js';
import { ServerMetrics } from '../../src/metrics/metrics.js';
import { SqliteStore } from '../../src/stores/sqlite/store.js';
import { ctx, settle } from '../engine/support.js';
import { single, total } from './scrape.js';

const HOUR = 3_600_000;

function meteredEngine() {
  const store = new SqliteStore({ path: ':memory:' });
  const clock = new ManualClock(1_700_000_000_000);
  const metrics = new ServerMetrics({ store, node: 'test-node' });
  const engine = new Engine({ store, clock, region: 'us-east-1', observer: metrics.observer });
  metrics.attach(engine, 'test-node');
  const call = (action: string, input: Record<string, unknown>) =>
    dispatch(engine, { ...ctx }, action, input) as Promise<Record<string, any>>;
  after(async () => {
    await engine.close();
    await store.close();
  });
  return { engine, clock, metrics, call };
}

/** A source queue dead-lettering after one receive into its DLQ; returns both URLs. */
async function pair(call: ReturnType<typeof meteredEngine>['call'], fifo: boolean) {
  const suffix = fifo ? '.fifo' : '';
  const fifoAttrs = fifo ? { FifoQueue: 'true', ContentBasedDeduplication: 'true' } : {};
  const dlq = (await call('CreateQueue', { QueueName: `dlq${suffix}`, Attributes: fifoAttrs })).QueueUrl as string;
  const src = (
    await call('CreateQueue', {
      QueueName: `src${suffix}`,
      Attributes: {
        ...fifoAttrs,
        RedrivePolicy: JSON.stringify({
          deadLetterTargetArn: `arn:aws:sqs:us-east-1:000000000000:dlq${suffix}`,
          maxReceiveCount: 1,
        }),
      },
    })
  ).QueueUrl as string;
  return {
    dlq,
    src,
    send: (url: string, body: string) =>
      call('SendMessage', { QueueUrl: url, MessageBody: body, ...(fifo && { MessageGroupId: 'g' }) }),
  };
}

/** Receives twice with no visibility timeout: the second receive moves the message to the DLQ. */
async function deadLetterOne(call: ReturnType<typeof meteredEngine>['call'], src: string) {
  assert.equal(((await call('ReceiveMessage', { QueueUrl: src, VisibilityTimeout: 0 })).Messages ?? []).length, 1);
  assert.equal(((await call('ReceiveMessage', { QueueUrl: src, VisibilityTimeout: 0 })).Messages ?? []).length, 0);
}

const dlqLabels = (name: string) => ({ queue_name: name, account_id: '000000000000', region: 'us-east-1' });

for (const fifo of [false, true]) {
  const kind = fifo ? 'FIFO' : 'standard';
  const suffix = fifo ? '.fifo' : '';

  test(`${kind}: a dead-letter move is not a send on the DLQ; a direct send to the DLQ is`, async () => {
    const { call, metrics } = meteredEngine();
    const { dlq, src, send } = await pair(call, fifo);
    await send(src, 'will fail');
    await deadLetterOne(call, src);
    await settle();
    let text = await metrics.scrape();
    assert.equal(
      single(text, 'redrive_approximate_number_of_messages_visible', dlqLabels(`dlq${suffix}`)),
      1,
      'the message is in the DLQ',
    );
    assert.equal(
      total(text, 'redrive_number_of_messages_sent_total', dlqLabels(`dlq${suffix}`)),
      0,
      'the move is not a send',
    );
    assert.equal(single(text, 'redrive_number_of_messages_sent_total', dlqLabels(`src${suffix}`)), 1);
    assert.equal(single(text, 'redrive_number_of_messages_received_total', dlqLabels(`src${suffix}`)), 1);
    assert.equal(single(text, 'redrive_number_of_empty_receives_total', dlqLabels(`src${suffix}`)), 1);
    assert.equal(
      single(text, 'redrive_messages_dead_lettered_total', {
        ...dlqLabels(`src${suffix}`),
        dead_letter_queue: `dlq${suffix}`,
        reason: 'delivery_limit',
        node: 'test-node',
      }),
      1,
    );
    assert.equal(single(text, 'redrive_dead_letter_queue_sources', dlqLabels(`dlq${suffix}`)), 1);

    await send(dlq, 'sent straight to the DLQ');
    text = await metrics.scrape();
    assert.equal(
      single(text, 'redrive_number_of_messages_sent_total', dlqLabels(`dlq${suffix}`)),
      1,
      'a direct send counts',
    );
    assert.equal(single(text, 'redrive_approximate_number_of_messages_visible', dlqLabels(`dlq${suffix}`)), 2);
  });

  test(`${kind}: the DLQ's oldest age counts from ${fifo ? 'the move' : 'the original send'}`, async () => {
    const { call, clock, metrics } = meteredEngine();
    const { src, send } = await pair(call, fifo);
    await send(src, 'ages');
    clock.advance(HOUR);
    await deadLetterOne(call, src);
    clock.advance(HOUR);
    const text = await metrics.scrape();
    const age = single(text, 'redrive_approximate_age_of_oldest_message', dlqLabels(`dlq${suffix}`));
    assert.equal(age, fifo ? 3600 : 7200);
    assert.equal(
      single(text, 'redrive_approximate_age_of_oldest_message', dlqLabels(`src${suffix}`)),
      0,
      'the source is empty',
    );
  });
}

test('FIFO: deduplicated sends, groups in flight, deletes and requests are counted', async () => {
  const { call, metrics } = meteredEngine();
  const url = (await call('CreateQueue', { QueueName: 'f.fifo', Attributes: { FifoQueue: 'true' } }))
    .QueueUrl as string;
  for (const [group, id] of [
    ['a', '1'],
    ['a', '1'],
    ['b', '2'],
    ['c', '3'],
  ]) {
    await call('SendMessage', {
      QueueUrl: url,
      MessageBody: `m${id}`,
      MessageGroupId: group,
      MessageDeduplicationId: id,
    });
  }
  const got = (await call('ReceiveMessage', { QueueUrl: url, MaxNumberOfMessages: 2 })).Messages as {
    ReceiptHandle: string;
  }[];
  assert.equal(got.length, 2);
  await call('DeleteMessage', { QueueUrl: url, ReceiptHandle: got[0]!.ReceiptHandle });
  await assert.rejects(call('DeleteMessage', { QueueUrl: url, ReceiptHandle: 'not-a-handle' }));
  const text = await metrics.scrape();
  const q = dlqLabels('f.fifo');
  assert.equal(single(text, 'redrive_number_of_messages_sent_total', q), 3);
  assert.equal(single(text, 'redrive_number_of_deduplicated_sent_messages_total', q), 1);
  assert.equal(single(text, 'redrive_number_of_messages_deleted_total', q), 1);
  assert.equal(single(text, 'redrive_approximate_number_of_groups_with_inflight_messages', q), 1);
  assert.equal(single(text, 'redrive_approximate_number_of_messages_not_visible', q), 1);
  assert.equal(single(text, 'redrive_approximate_number_of_messages_visible', q), 1);
  assert.equal(single(text, 'redrive_sent_message_size_bytes_count', q), 3);
  assert.equal(single(text, 'redrive_sent_message_size_bytes_sum', q), 6);
  assert.equal(single(text, 'redrive_requests_total', { action: 'SendMessage', protocol: 'json', error_code: '' }), 4);
  assert.equal(
    single(text, 'redrive_requests_total', { action: 'DeleteMessage', error_code: 'ReceiptHandleIsInvalid' }),
    1,
  );
  assert.equal(single(text, 'redrive_request_duration_seconds_count', { action: 'SendMessage' }), 4);
});

test('a deleted queue leaves the scrape, with its counters', async () => {
  const { call, metrics } = meteredEngine();
  const url = (await call('CreateQueue', { QueueName: 'gone' })).QueueUrl as string;
  await call('SendMessage', { QueueUrl: url, MessageBody: 'x' });
  assert.equal(single(await metrics.scrape(), 'redrive_number_of_messages_sent_total', dlqLabels('gone')), 1);
  await call('DeleteQueue', { QueueUrl: url });
  const text = await metrics.scrape();
  assert.equal(total(text, 'redrive_number_of_messages_sent_total', dlqLabels('gone')), 0);
  assert.equal(total(text, 'redrive_approximate_number_of_messages_visible', dlqLabels('gone')), 0);
});

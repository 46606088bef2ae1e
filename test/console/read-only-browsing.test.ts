/**
 * Browsing in the console receives nothing: opening the message browser and a message's
 * page leaves every receive count, visibility and receive time as it was, in a DLQ and
 * in a queue with a message in flight.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { Page } from 'playwright-core';
import type { ServerProcess } from '../support/server-process.js';
import { deadLetter, sourceOf } from '../e2e/dlq-helpers.js';
import { browserMissing, openPage, pageErrors, useConsole } from './browser.js';

const skip = browserMissing();
const running = useConsole(skip);
let server: ServerProcess;
let page: Page;
let sqs: SQSClient;

async function api(action: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const res = await fetch(`${server.url}/`, {
    method: 'POST',
    headers: { 'x-amz-target': `AmazonSQS.${action}`, 'content-type': 'application/x-amz-json-1.0' },
    body: JSON.stringify(body),
  });
  return (await res.json()) as Record<string, unknown>;
}

/** Everything a receive would change, per message, plus the queue's counts. */
async function snapshot(url: string) {
  const peeked = (await api('PeekMessages', { QueueUrl: url, MaxResults: 100 })).Messages as {
    MessageId: string;
    State: string;
    VisibleTimestamp: number;
    Attributes: Record<string, string>;
  }[];
  const attrs = (await api('GetQueueAttributes', { QueueUrl: url, AttributeNames: ['All'] })).Attributes as Record<
    string,
    string
  >;
  return {
    messages: peeked.map((m) => ({
      id: m.MessageId,
      state: m.State,
      visible: m.VisibleTimestamp,
      receives: m.Attributes.ApproximateReceiveCount,
      firstReceive: m.Attributes.ApproximateFirstReceiveTimestamp,
    })),
    counts: [
      attrs.ApproximateNumberOfMessages,
      attrs.ApproximateNumberOfMessagesNotVisible,
      attrs.ApproximateNumberOfMessagesDelayed,
    ],
  };
}

test('browsing a DLQ and a queue with a message in flight changes no receive count, visibility or receive time', {
  skip,
}, async () => {
  [server, page] = [running.server(), running.page()];
  sqs = server.client();
  const errors = pageErrors(page);
  const src = await sourceOf(sqs, 'work', 'work-dlq');
  await deadLetter(sqs, src, ['{"n":1}', '{"n":2}', '{"n":3}']);
  await api('SendMessage', { QueueUrl: src, MessageBody: 'held' });
  await api('SendMessage', { QueueUrl: src, MessageBody: 'waiting' });
  const held = await sqs.send(
    new ReceiveMessageCommand({ QueueUrl: src, MaxNumberOfMessages: 1, VisibilityTimeout: 600 }),
  );
  assert.equal(held.Messages?.[0]?.Body, 'held');
  const dlq = `${server.url}/000000000000/work-dlq`;
  const before = { dlq: await snapshot(dlq), src: await snapshot(src) };
  assert.equal(before.dlq.messages.length, 3);
  assert.deepEqual(
    before.src.messages.map((m) => m.state),
    ['IN_FLIGHT', 'VISIBLE'],
  );

  for (const queue of ['work-dlq', 'work']) {
    await openPage(page, `${server.url}/console/queues/${queue}/messages`);
    const rows = page.locator('#messages-table tbody tr');
    const n = await rows.count();
    assert.ok(n >= 2, `${queue} lists its messages`);
    for (let i = 0; i < n; i++) {
      await openPage(page, `${server.url}/console/queues/${queue}/messages`);
      await page.locator('#messages-table tbody tr').nth(i).locator('a').click();
      await page.waitForSelector('#message-body');
    }
    await openPage(page, `${server.url}/console/queues/${queue}`);
  }

  assert.deepEqual({ dlq: await snapshot(dlq), src: await snapshot(src) }, before);
  // The message still held by its consumer was not handed to anyone else either.
  const again = await sqs.send(
    new ReceiveMessageCommand({ QueueUrl: src, MaxNumberOfMessages: 10, VisibilityTimeout: 600 }),
  );
  assert.deepEqual(
    again.Messages?.map((m) => m.Body),
    ['waiting'],
  );
  assert.deepEqual(errors, []);
});

/**
 * The console's panels backed by Redrive's extensions, in a real browser against a real
 * server: the overview from ListQueueSummaries, a DLQ's breakdown, a queue's activity
 * chart, deleting a selection of messages, and the server-side search.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  DeleteMessageCommand,
} from '@aws-sdk/client-sqs';
import type { Page } from 'playwright-core';
import { browserMissing, openPage, useConsole } from './browser.js';

const skip = browserMissing();
const ARN = 'arn:aws:sqs:us-east-1:000000000000:';

const run = useConsole(skip, { server: {}, viewport: { width: 1280, height: 900 } });

async function api(action: string, body: Record<string, unknown>): Promise<Record<string, any>> {
  const res = await fetch(`${run.server().url}/`, {
    method: 'POST',
    headers: { 'x-amz-target': `AmazonSQS.${action}`, 'content-type': 'application/x-amz-json-1.0' },
    body: JSON.stringify(body),
  });
  assert.equal(res.status, 200, await res.clone().text());
  return res.json() as Promise<Record<string, any>>;
}

const url = (name: string) => `${run.server().url}/000000000000/${name}`;
async function queue(name: string, deadLetterQueue?: string): Promise<string> {
  const Attributes = deadLetterQueue
    ? { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: `${ARN}${deadLetterQueue}`, maxReceiveCount: 1 }) }
    : undefined;
  return (await api('CreateQueue', { QueueName: name, Attributes })).QueueUrl as string;
}

/** Sends the bodies to a source with maxReceiveCount 1 and receives twice, so each is dead-lettered. */
async function kill(src: string, bodies: string[], attributes?: Record<string, string>): Promise<void> {
  await run.sqs().send(
    new SendMessageBatchCommand({
      QueueUrl: src,
      Entries: bodies.map((b, i) => ({
        Id: `m${i}`,
        MessageBody: b,
        MessageAttributes:
          attributes &&
          Object.fromEntries(Object.entries(attributes).map(([k, v]) => [k, { DataType: 'String', StringValue: v }])),
      })),
    }),
  );
  for (let i = 0; i < 20; i++) {
    const got = await run
      .sqs()
      .send(new ReceiveMessageCommand({ QueueUrl: src, MaxNumberOfMessages: 10, VisibilityTimeout: 0 }));
    if ((got.Messages ?? []).length === 0) return;
  }
}

async function rejectOne(src: string, body: string, reason: string): Promise<void> {
  await run.sqs().send(new SendMessageCommand({ QueueUrl: src, MessageBody: body }));
  const [m] =
    (await run.sqs().send(new ReceiveMessageCommand({ QueueUrl: src, VisibilityTimeout: 60 }))).Messages ?? [];
  await api('RejectMessage', { QueueUrl: src, ReceiptHandle: m!.ReceiptHandle, Reason: reason });
}

const bodiesShown = async () =>
  (await run.page().locator('#messages-table tbody tr .body-preview').allTextContents()).sort();

describe('console panels backed by extensions', { skip }, () => {
  test('the overview shows counts and dead-letter relations from one ListQueueSummaries request', async () => {
    const dlq = await queue('ov-dlq');
    const a = await queue('ov-a', 'ov-dlq');
    await queue('ov-b', 'ov-dlq');
    // A card is a dead-letter queue holding messages.
    await run.sqs().send(new SendMessageCommand({ QueueUrl: dlq, MessageBody: 'dead' }));
    for (const b of ['1', '2', '3']) await run.sqs().send(new SendMessageCommand({ QueueUrl: a, MessageBody: b }));
    await run.sqs().send(new SendMessageCommand({ QueueUrl: a, MessageBody: 'later', DelaySeconds: 900 }));
    await run.sqs().send(new ReceiveMessageCommand({ QueueUrl: a, MaxNumberOfMessages: 1, VisibilityTimeout: 600 }));
    const targets: string[] = [];
    run.page().on('request', (r) => {
      if (r.url().endsWith('/console/api')) targets.push(r.headers()['x-amz-target'] ?? '');
    });
    await openPage(run.page(), `${run.server().url}/console/?refresh=off`);
    await run.page().waitForSelector('#queues-table tr[data-queue="ov-a"]');
    const cells = await run.page().locator('#queues-table tr[data-queue="ov-a"] td').allTextContents();
    assert.equal(cells[1], 'us-east-1', 'the region column');
    assert.deepEqual(cells.slice(4, 7), ['2', '1', '1'], 'visible, in flight, delayed');
    assert.match(cells[3]!, /source\s*→\s*ov-dlq\s*after 1/);
    assert.match((await run.page().textContent('.dlq-card[data-queue="ov-dlq"]')) ?? '', /fed by\s*ov-a,\s*ov-b/);
    assert.deepEqual(targets, ['AmazonSQS.ListQueueSummaries'], 'one request for the whole overview');
    run.page().removeAllListeners('request');
  });

  test('a DLQ’s run.page() breaks its messages down by source and reason', async () => {
    await queue('br-dlq');
    const a = await queue('br-a', 'br-dlq');
    const b = await queue('br-b', 'br-dlq');
    await kill(a, ['a1', 'a2', 'a3']);
    await rejectOne(b, 'b1', 'bad schema');
    await openPage(run.page(), `${run.server().url}/console/queues/br-dlq`);
    await run.page().waitForSelector('#by-source');
    const rows = async (id: string) =>
      await run
        .page()
        .locator(`#${id} tbody tr`)
        .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].slice(0, 2).map((td) => td.textContent)));
    assert.deepEqual(await rows('by-source'), [
      ['br-a', '3'],
      ['br-b', '1'],
    ]);
    assert.deepEqual(await rows('by-reason'), [
      ['delivery_limit', '3'],
      ['rejected', '1'],
    ]);
    await run.page().waitForSelector('#activity-totals');
    assert.match(
      (await run.page().textContent('#activity-totals')) ?? '',
      /^0 sent, 0 received, 0 deleted, 0 dead-lettered, 4 arrived by dead-lettering; 4 in the queue now\.$/,
      'a DLQ shows what arrived in it, which is not a send',
    );
  });

  test('a queue’s run.page() charts its last hour with the right numbers', async () => {
    const q = await queue('act');
    await run.sqs().send(
      new SendMessageBatchCommand({
        QueueUrl: q,
        Entries: ['1', '2', '3', '4', '5'].map((b) => ({ Id: b, MessageBody: b })),
      }),
    );
    const got =
      (await run.sqs().send(new ReceiveMessageCommand({ QueueUrl: q, MaxNumberOfMessages: 3, VisibilityTimeout: 600 })))
        .Messages ?? [];
    assert.equal(got.length, 3);
    for (const m of got.slice(0, 2))
      await run.sqs().send(new DeleteMessageCommand({ QueueUrl: q, ReceiptHandle: m.ReceiptHandle! }));
    await openPage(run.page(), `${run.server().url}/console/queues/act`);
    await run.page().waitForSelector('#activity-totals');
    assert.equal(
      await run.page().textContent('#activity-totals'),
      '5 sent, 3 received, 2 deleted, 0 dead-lettered, 0 arrived by dead-lettering; 3 in the queue now.',
    );
    assert.equal(
      await run.page().locator('#activity svg.chart polyline.series').count(),
      6,
      'five counts and the depth',
    );
  });

  test('deleting a selection of messages from a DLQ', async () => {
    await queue('sel-dlq');
    await kill(await queue('sel', 'sel-dlq'), ['keep-1', 'drop-1', 'keep-2', 'drop-2']);
    await openPage(run.page(), `${run.server().url}/console/queues/sel-dlq/messages`);
    await run.page().waitForSelector('#messages-table');
    for (const body of ['drop-1', 'drop-2'])
      await run.page().locator('#messages-table tbody tr', { hasText: body }).locator('input[type=checkbox]').check();
    await run.page().click('#delete-selected');
    await run.page().click('dialog.confirm button:has-text("Delete 2")');
    await run.page().waitForSelector('text=Deleted 2 of 2.');
    await run.page().waitForLoadState('load');
    await run.page().waitForFunction(() => document.querySelectorAll('#messages-table tbody tr').length === 2);
    assert.deepEqual(await bodiesShown(), ['keep-1', 'keep-2']);
    const left = (await api('PeekMessages', { QueueUrl: url('sel-dlq') })).Messages.map(
      (m: { Body: string }) => m.Body,
    ).sort();
    assert.deepEqual(left, ['keep-1', 'keep-2']);
  });

  test('the server searches by death reason, attribute and body text', async () => {
    await queue('srch-dlq');
    const src = await queue('srch', 'srch-dlq');
    await kill(src, ['{"type":"refund"}', '{"type":"order"}']);
    await kill(src, ['tenant message'], { tenant: 'acme' });
    await rejectOne(src, 'rejected message', 'no');
    const search = async (fill: (p: Page) => Promise<unknown>) => {
      await openPage(run.page(), `${run.server().url}/console/queues/srch-dlq/messages`);
      await fill(run.page());
      await run.page().click('form.search button[type=submit]');
      await run.page().waitForURL(/\?/);
      await run.page().waitForSelector('body[data-ready="true"]');
      await run.page().waitForSelector('#messages-table, #no-match');
      return bodiesShown();
    };
    const targets: string[] = [];
    run.page().on('request', (r) => {
      if (r.url().endsWith('/console/api') && r.headers()['x-amz-target'] === 'AmazonSQS.PeekMessages')
        targets.push(r.postData() ?? '');
    });
    assert.deepEqual(await search((p) => p.selectOption('select[name=DeathReason]', 'rejected')), ['rejected message']);
    assert.ok(
      targets.some((t) => JSON.parse(t).Filter?.DeathReason === 'rejected'),
      'the filter goes to the server',
    );
    assert.deepEqual(
      await search(async (p) => {
        await p.fill('input[name=attrName]', 'tenant');
        await p.fill('input[name=attrValue]', 'acme');
      }),
      ['tenant message'],
    );
    assert.deepEqual(await search((p) => p.fill('input[name=BodyContains]', 'refund')), ['{"type":"refund"}']);
    assert.deepEqual(await search((p) => p.selectOption('select[name=DeathReason]', 'expired')), []);
    assert.equal(await run.page().textContent('#no-match'), 'No message matches.');
    run.page().removeAllListeners('request');
    // The search carries over to a redrive of exactly those messages.
    await search((p) => p.fill('input[name=BodyContains]', 'refund'));
    await run.page().click('#redrive-these');
    await run.page().waitForSelector('form.redrive');
    assert.equal(await run.page().inputValue('input[name=BodyContains]'), 'refund');
    await run.page().click('#preview-button');
    await run.page().waitForSelector('#preview.notice');
    assert.match((await run.page().textContent('#preview')) ?? '', /^1 of 4 visible messages would move/);
    assert.deepEqual(run.errors(), []);
  });
});

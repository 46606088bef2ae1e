/**
 * The dead-letter story, in a real browser against a real server: queues made in the
 * console, messages killed by a real consumer, found and understood in the console, and
 * a filtered redrive previewed, run and followed there, checked through the AWS SDK.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ReceiveMessageCommand, SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { browserMissing, logMatch, openPage, screenshot, useConsole } from './browser.js';
import { drain } from '../e2e/dlq-helpers.js';

const skip = browserMissing();

async function fetchJson(url: string, action: string, body: unknown): Promise<unknown> {
  const res = await fetch(`${url}/`, {
    method: 'POST',
    headers: { 'x-amz-target': `AmazonSQS.${action}`, 'content-type': 'application/x-amz-json-1.0' },
    body: JSON.stringify(body),
  });
  assert.equal(res.status, 200, await res.clone().text());
  return res.json();
}

// The SQLite store, as a first run of `redrive serve` has it.
const run = useConsole(skip, { server: {}, viewport: { width: 1440, height: 860 } });

const REFUNDS = [1, 4, 7, 9].map((n) => JSON.stringify({ type: 'refund', order: `A-${100 + n}`, amount: n * 10 }));
const ORDERS = [0, 2, 3, 5, 6, 8].map((n) =>
  JSON.stringify({ type: 'order', order: `A-${100 + n}`, items: [{ sku: `sku-${n}`, qty: 1 }] }),
);

test('the dead-letter story: set up, watch messages die, understand why, redrive only the chosen ones', {
  skip,
}, async () => {
  const server = run.server();
  const page = run.page();
  const sqs = run.sqs();
  assert.match(
    await logMatch(server.output, /console open/),
    /console open without sign-in at http:\/\/127\.0\.0\.1:\d+\/console/,
  );

  // Create the DLQ and the source through the console's create page.
  await openPage(page, `${server.url}/console/create-queue`);
  await page.fill('input[name=QueueName]', 'orders-dlq');
  await page.click('button:has-text("Create queue")');
  await page.waitForURL('**/console/queues/orders-dlq');
  await openPage(page, `${server.url}/console/create-queue`);
  await page.fill('input[name=QueueName]', 'orders');
  await page.selectOption('select[name=deadLetterQueue]', 'orders-dlq');
  await page.fill('input[name=maxReceiveCount]', '2');
  await page.click('button:has-text("Create queue")');
  await page.waitForURL('**/console/queues/orders');
  await page.waitForSelector('text=Messages received more than');
  assert.match((await page.textContent('.relations')) ?? '', /more than 2 times are moved to orders-dlq/);

  // A consumer that never deletes: every message dies on its third receive.
  const src = `${server.url}/000000000000/orders`;
  const bodies = [...REFUNDS, ...ORDERS].sort();
  await sqs.send(
    new SendMessageBatchCommand({ QueueUrl: src, Entries: bodies.map((b, i) => ({ Id: `m${i}`, MessageBody: b })) }),
  );
  for (let attempt = 0; attempt < 20; attempt++) {
    const got = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: src, MaxNumberOfMessages: 10, VisibilityTimeout: 0 }),
    );
    if ((got.Messages ?? []).length === 0) break;
  }
  // Other queues, so the overview looks like an account's.
  await fetchJson(server.url, 'CreateQueue', { QueueName: 'payments-dlq' });
  await fetchJson(server.url, 'CreateQueue', {
    QueueName: 'payments',
    Attributes: {
      RedrivePolicy: JSON.stringify({
        deadLetterTargetArn: 'arn:aws:sqs:us-east-1:000000000000:payments-dlq',
        maxReceiveCount: 5,
      }),
    },
  });
  await fetchJson(server.url, 'CreateQueue', { QueueName: 'audit.fifo', Attributes: { FifoQueue: 'true' } });
  // Add one healthy message to the source so the overview shows a live queue too.
  await sqs.send(
    new SendMessageBatchCommand({
      QueueUrl: src,
      Entries: [{ Id: 'live', MessageBody: '{"type":"order","order":"A-200"}' }],
    }),
  );

  // The overview shows the DLQ holding the 10 messages, fed by orders.
  await openPage(page, `${server.url}/console/`);
  const card = page.locator('.dlq-card[data-queue="orders-dlq"]');
  await card.locator('text=10 messages').waitFor();
  assert.match((await card.textContent()) ?? '', /fed by\s*orders/);
  assert.equal(await page.locator('#queues-table tr.attention[data-queue="orders-dlq"]').count(), 1);
  await screenshot(page, 'console-overview');

  // The DLQ's page, then its messages, then one message and why it died.
  await page.click('.dlq-card[data-queue="orders-dlq"] header a');
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForSelector('#stats .stat');
  assert.equal((await page.locator('#stats .stat').first().textContent())?.replace(/\D/g, ''), '10');
  // Why they are here: all ten died in orders, past the delivery limit.
  await page.waitForSelector('#by-source');
  assert.match((await page.textContent('#by-source tr[data-key="orders"]')) ?? '', /orders\s*10/);
  assert.match((await page.textContent('#by-reason tr[data-key="delivery_limit"]')) ?? '', /delivery_limit\s*10/);
  await screenshot(page, 'console-dlq');
  await page.click('.tabs a:has-text("Messages")');
  await page.waitForSelector('#messages-table');
  assert.equal(await page.locator('#messages-table tbody tr').count(), 10);
  // Search them: the server filters by death reason and body text.
  await page.fill('input[name=BodyContains]', 'refund');
  await page.selectOption('select[name=DeathReason]', 'delivery_limit');
  await page.click('form.search button[type=submit]');
  await page.waitForURL(/DeathReason=delivery_limit/);
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForSelector('#messages-table');
  const found = await page.locator('#messages-table tbody tr .body-preview').allTextContents();
  assert.deepEqual(found.map((b) => JSON.parse(b).order).sort(), ['A-101', 'A-104', 'A-107', 'A-109']);
  await page.locator('#messages-table tbody tr', { hasText: 'refund' }).first().locator('a').click();
  await page.waitForSelector('#death-history');
  const death = await page.textContent('#death-history li');
  assert.match(death ?? '', /delivery_limit\s*in\s*orders/);
  assert.match(death ?? '', /× 1/);
  assert.match((await page.textContent('.death-summary')) ?? '', /received more times than maxReceiveCount allows/);
  assert.match((await page.textContent('#message-body')) ?? '', /"type": "refund"/);
  await screenshot(page, 'console-message');

  // Preview a redrive of the refunds only, then run it slowly enough to watch.
  await page.click('.tabs a:has-text("Redrive")');
  await page.waitForSelector('form.redrive');
  await page.fill('input[name=BodyJsonPath]', '$.type');
  await page.fill('input[name=Equals]', '"refund"');
  await page.click('#preview-button');
  await page.waitForSelector('#preview.notice');
  assert.match(
    (await page.textContent('#preview')) ?? '',
    /^4 of 10 visible messages would move back to the queues they died in \(filtered\)/,
  );
  await page.fill('input[name=rate]', '2');
  await page.click('#start-button');
  await page.click('dialog.confirm button:has-text("Move 4 messages")');
  await page.waitForSelector('li.task[data-status="RUNNING"]');
  await page.evaluate(() => window.scrollTo(0, 0));
  await screenshot(page, 'console-redrive');
  await page.waitForSelector('li.task[data-status="COMPLETED"]', { timeout: 10_000 });
  assert.match((await page.textContent('li.task')) ?? '', /moved 4 of 4/);
  assert.equal(await page.textContent('li.task .task-filter'), '$.type = "refund"', 'the filter as the CLI words it');

  // Exactly the refunds are back in the source (with the live one); the orders stay in the DLQ.
  const back = (await drain(sqs, src)).map((m) => m.Body!).sort();
  assert.deepEqual(back, [...REFUNDS, '{"type":"order","order":"A-200"}'].sort());
  const left = (await drain(sqs, `${server.url}/000000000000/orders-dlq`)).map((m) => m.Body!).sort();
  assert.deepEqual(left, [...ORDERS].sort());
  assert.deepEqual(run.errors(), []);
});

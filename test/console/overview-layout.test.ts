/**
 * The console at 1440 px with many dead-letter queues: the cards show only those holding
 * messages and follow the page's filters, the table starts near the top, the overview
 * table and the message browser fit without a sideways scroll, the redrive page names its
 * destination with a search box, and a confirmation's backdrop covers the whole window.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CreateQueueCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { browserMissing, openPage, useConsole } from './browser.js';

const skip = browserMissing();
const DLQS = 150;
const HOLDING = 22;
const pad = (i: number) => String(i).padStart(3, '0');

/** DLQS queues with their dead-letter queues, HOLDING of those holding a message. */
async function seed(sqs: SQSClient): Promise<void> {
  for (let i = 0; i < DLQS; i++) {
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: `dead-letters-of-service-${pad(i)}` }));
    await sqs.send(
      new CreateQueueCommand({
        QueueName: `service-${pad(i)}`,
        Attributes: {
          RedrivePolicy: JSON.stringify({
            deadLetterTargetArn: `arn:aws:sqs:us-east-1:000000000000:dead-letters-of-service-${pad(i)}`,
            maxReceiveCount: 3,
          }),
        },
      }),
    );
    if (i < HOLDING) {
      const body = JSON.stringify({ order: `A-${i}`, note: 'x'.repeat(400), items: [{ sku: 'sku-1', qty: 2 }] });
      await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: body }));
    }
  }
}

const run = useConsole(skip, { viewport: { width: 1440, height: 900 }, seed });

const cards = () =>
  run
    .page()
    .locator('.dlq-card')
    .evaluateAll((c) => c.map((e) => e.getAttribute('data-queue')));
/** How far a box's content overflows it sideways, in px (0 when it fits). */
const overflow = (selector: string) =>
  run
    .page()
    .$eval(selector, (e) => e.scrollWidth - e.clientWidth)
    .then((n) => Math.max(0, n));

test('the cards are the dead-letter queues holding messages, under the filters the table has', { skip }, async () => {
  const page = run.page();
  const server = run.server();
  await openPage(page, `${server.url}/console/queues`);
  await page.waitForSelector('#queues-table tbody tr');
  assert.equal((await cards()).length, HOLDING, `${DLQS} dead-letter queues, ${HOLDING} with messages`);
  await openPage(page, `${server.url}/console/queues?show=DeadLetterQueuesWithMessages&q=service-01`);
  await page.waitForSelector('#queues-table tbody tr');
  assert.deepEqual(
    await cards(),
    Array.from({ length: 10 }, (_, i) => `dead-letters-of-service-${pad(10 + i)}`),
    'the name filter keeps ten of them',
  );
  assert.equal(await page.locator('#queues-table tbody tr').count(), 10);
});

test('at 1440 px the overview table starts near the top and fits, its dead-lettered rate column too', {
  skip,
}, async () => {
  const page = run.page();
  const server = run.server();
  await openPage(page, `${server.url}/console/queues`);
  await page.waitForSelector('#queues-table tbody tr');
  const top = await page.$eval('#queues-table', (t) => t.getBoundingClientRect().top + window.scrollY);
  assert.ok(top < 900, `the table starts ${Math.round(top)} px down, within the first screen`);
  assert.equal(await overflow('.table-wrap'), 0, 'no sideways scroll in the table');
  assert.equal(await overflow('html'), 0, 'nor in the page');
  const rate = await page.$eval('#queues-table thead tr:last-child th:last-child', (th) => {
    const r = th.getBoundingClientRect();
    return { right: r.right, text: th.textContent };
  });
  assert.match(rate.text ?? '', /Dead-lettered/);
  assert.ok(rate.right <= 1440, `the dead-lettered rate column ends at ${Math.round(rate.right)} px`);
});

test("at 1440 px the message browser's body column fits", { skip }, async () => {
  const page = run.page();
  const server = run.server();
  await openPage(page, `${server.url}/console/queues/dead-letters-of-service-000/messages`);
  await page.waitForSelector('td.body-preview');
  assert.equal(await overflow('.table-wrap'), 0, 'no sideways scroll in the table');
  assert.equal(await overflow('html'), 0, 'nor in the page');
  const right = await page.$eval('td.body-preview', (td) => td.getBoundingClientRect().right);
  assert.ok(right <= 1440, `the body column ends at ${Math.round(right)} px`);
});

test('the redrive destination is a search box whose suggestions the server finds', { skip }, async () => {
  const page = run.page();
  const server = run.server();
  await openPage(page, `${server.url}/console/queues/dead-letters-of-service-000/redrive`);
  assert.equal(await page.locator('form.redrive select[name=destinationQueue]').count(), 0, 'no list of every queue');
  await page.fill('input[name=destinationQueue]', 'service-14');
  await page.waitForFunction(() => document.querySelectorAll('#destination-suggestions option').length > 0);
  const offered = await page
    .locator('#destination-suggestions option')
    .evaluateAll((o) => o.map((e) => (e as HTMLOptionElement).value));
  assert.deepEqual(
    offered,
    [
      'dead-letters-of-service-140',
      ...Array.from({ length: 9 }, (_, i) => `dead-letters-of-service-14${i + 1}`),
      'service-140',
      ...Array.from({ length: 9 }, (_, i) => `service-14${i + 1}`),
    ].sort(),
  );
  assert.equal(await page.isChecked('input[name=destination][value=queue]'), true, 'typing chooses "another queue"');
  await page.fill('input[name=destinationQueue]', '');
  await page.click('#preview-button');
  await page.waitForSelector('#preview.error');
  assert.match((await page.textContent('#preview')) ?? '', /Name the queue/);
});

test("a confirmation's backdrop covers the whole window, the title band included", { skip }, async () => {
  const page = run.page();
  const server = run.server();
  await openPage(page, `${server.url}/console/queues/dead-letters-of-service-000/redrive`);
  await page.fill('input[name=destinationQueue]', 'service-000');
  await page.click('#start-button');
  await page.waitForSelector('dialog.confirm[open]');
  // What a click at the top left (the title band) would reach: the backdrop's dialog, not the header.
  const hit = await page.evaluate(() => document.elementFromPoint(5, 5)?.closest('header, dialog')?.tagName);
  assert.equal(hit, 'DIALOG');
  const band = await page.screenshot({ clip: { x: 0, y: 0, width: 40, height: 40 } });
  await page.keyboard.press('Escape');
  const clear = await page.screenshot({ clip: { x: 0, y: 0, width: 40, height: 40 } });
  assert.notDeepEqual(band, clear, 'the title band is shaded while the dialog is open');
  assert.deepEqual(run.errors(), []);
});

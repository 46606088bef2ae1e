/**
 * AMQP dead letters in the console, in a real Chromium against a real server with amqplib:
 * the overview shows the source -> exchange -> DLQ relation, and a message page shows the
 * exchange, routing key, properties, typed headers, x-death as a table, a binary body as
 * hex (and base64) with its content type, and a basic.reject as a rejection over AMQP.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import amqp, { type ChannelModel } from 'amqplib';
import type { Browser, Page } from 'playwright-core';
import { startAmqpServer, type AmqpServer } from '../amqp/support.js';
import { browserMissing, launchBrowser, openPage, pageErrors, screenshot } from './browser.js';

const skip = browserMissing();
let redrive: AmqpServer;
let conn: ChannelModel;
let browser: Browser;
let page: Page;
let errors: string[];

before(async () => {
  if (skip) return;
  redrive = await startAmqpServer({ storage: 'memory' });
  conn = await amqp.connect(redrive.url);
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  errors = pageErrors(page);
});

after(async () => {
  await conn?.close().catch(() => undefined);
  await browser?.close();
  await redrive?.server.stop();
  redrive?.server.cleanup();
});

test('an AMQP dead letter in the console: relations, properties, headers, x-death, binary body', { skip }, async () => {
  const url = redrive.server.url;
  const ch = await conn.createConfirmChannel();
  await ch.assertExchange('work-dlx', 'direct');
  await ch.assertQueue('work', { arguments: { 'x-dead-letter-exchange': 'work-dlx' } });
  await ch.assertQueue('work-dead');
  await ch.bindQueue('work-dead', 'work-dlx', 'work');
  const body = Buffer.from([0x00, 0x01, 0xfe, 0xff, 0x41, 0x42]);
  ch.sendToQueue('work', body, {
    contentType: 'application/octet-stream',
    correlationId: 'corr-7',
    messageId: 'order-7',
    deliveryMode: 2,
    priority: 4,
    headers: { tenant: 'acme', attempt: 3, flags: { '!': 'unsignedshort', value: 9 } },
  });
  await ch.waitForConfirms();
  const got = await ch.get('work');
  assert.ok(got);
  ch.reject(got, false);
  await new Promise((r) => setTimeout(r, 200));
  assert.match(redrive.server.output(), /"queue":"work-dead".*"via":"amqp".*"msg":"queue created"/);

  await openPage(page, `${url}/console`);
  await page.waitForSelector('#queues-table tr[data-queue="work"]');
  const workRole = (await page.textContent('#queues-table tr[data-queue="work"] .roles')) ?? '';
  assert.match(workRole, /source → exchange work-dlx → work-dead/);
  assert.match(
    (await page.textContent('.dlq-card[data-queue="work-dead"]')) ?? '',
    /fed by work via exchange work-dlx/,
  );

  await openPage(page, `${url}/console/queues/work`);
  assert.match(
    (await page.textContent('#dead-letter-exchange')) ?? '',
    /published to exchange work-dlx with their own routing keys/,
  );

  await openPage(page, `${url}/console/queues/work-dead/messages`);
  const link = page.locator('a[href*="/console/queues/work-dead/messages/"]').first();
  await link.click();
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForSelector('#amqp-properties');
  const props = (await page.textContent('#amqp-properties')) ?? '';
  for (const want of [
    /Exchangework-dlx/,
    /Routing keywork/,
    /contentTypeapplication\/octet-stream/,
    /correlationIdcorr-7/,
    /messageIdorder-7/,
    /deliveryMode2/,
    /priority4/,
  ]) {
    assert.match(props, want);
  }
  const headers = await page.locator('#amqp-headers tbody tr').allTextContents();
  assert.deepEqual(headers, ['tenantstring (S)acme', 'attemptint8 (b)3', 'flagsuint16 (u)9']);
  const xDeath = await page.locator('#x-death tbody tr td').allTextContents();
  assert.deepEqual(xDeath.slice(0, 5), ['1', 'rejected', 'work', '(default)', 'work']);
  assert.match(
    (await page.textContent('.death-summary')) ?? '',
    /because it was rejected over AMQP \(basic\.reject or basic\.nack\)/,
  );
  assert.match(
    (await page.textContent('#death-history')) ?? '',
    /published to exchange \(default\) with routing keys work/,
  );
  assert.match(
    (await page.textContent('figure.body figcaption')) ?? '',
    /Binary · application\/octet-stream · 6 bytes/,
  );
  assert.match((await page.textContent('#message-body')) ?? '', /^00000000 {2}00 01 fe ff 41 42 +\.\.\.\.AB$/);
  await page.click('#body-base64');
  assert.equal(await page.textContent('#message-body'), body.toString('base64'));
  await screenshot(page, 'console-amqp-message');
  assert.deepEqual(errors, []);
});

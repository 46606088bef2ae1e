/**
 * The broker at a glance in a real Chromium against a real server: the Connections page
 * lists an SQS client by access key, a pika and an amqplib connection with their consumers,
 * prefetch and unacknowledged counts, and its Close button (after a confirmation) closes
 * the amqplib one with 320 and logs who did; the Exchanges page shows an exchange's
 * bindings; a queue's page shows its consumers and the SQS long polls waiting on it; an
 * AMQP 1.0 connection (rhea) is listed with its protocol, its session and its receiving
 * link as a consumer, on the page and in the management API.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { after, before, test } from 'node:test';
import amqp, { type ChannelModel } from 'amqplib';
import { CreateQueueCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { Browser, Page } from 'playwright-core';
import { pause, startAmqpServer, type AmqpServer } from '../amqp/support.js';
import { close, connect, receiver } from '../amqp10/support.js';
import { needs } from '../support/requirements.js';
import { browserMissing, launchBrowser, logMatch, openPage, pageErrors, screenshot } from './browser.js';

const skip = browserMissing();
const pika = needs('pika').skip;
let redrive: AmqpServer;
let conn: ChannelModel;
let pikaProc: ChildProcess | undefined;
let browser: Browser;
let page: Page;
let errors: string[];
let sqs: SQSClient;

/** A pika consumer with prefetch 2 on `orders`, acknowledging nothing, until killed. */
const PIKA_CONSUMER = `
import sys, pika
conn = pika.BlockingConnection(pika.URLParameters(sys.argv[1] + "?heartbeat=0"))
ch = conn.channel()
ch.basic_qos(prefetch_count=2)
ch.basic_consume(queue="orders", on_message_callback=lambda *a: None, consumer_tag="pika-consumer")
print("consuming", flush=True)
ch.start_consuming()
`;

before(async () => {
  if (skip) return;
  redrive = await startAmqpServer({ storage: 'memory' });
  conn = await amqp.connect(redrive.url, { clientProperties: { connection_name: 'amqplib-worker' } });
  const ch = await conn.createChannel();
  await ch.prefetch(5);
  await ch.assertExchange('orders-x', 'topic');
  await ch.assertQueue('orders');
  await ch.bindQueue('orders', 'orders-x', 'order.#');
  for (let i = 0; i < 4; i++) ch.publish('orders-x', 'order.new', Buffer.from(`m${i}`));
  await ch.checkQueue('orders');
  await ch.consume('orders', () => undefined, { consumerTag: 'amqplib-consumer' });
  sqs = new SQSClient({
    endpoint: redrive.server.url,
    region: 'us-east-1',
    credentials: { accessKeyId: 'AKIDCONSOLE', secretAccessKey: 'x' },
    maxAttempts: 1,
  });
  await sqs.send(
    new SendMessageCommand({ QueueUrl: `${redrive.server.url}/000000000000/orders`, MessageBody: 'over sqs' }),
  );
  if (!pika) {
    pikaProc = spawn('/usr/bin/python3', ['-c', PIKA_CONSUMER, redrive.url], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve) => pikaProc!.stdout!.once('data', () => resolve()));
  }
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  errors = pageErrors(page);
});

after(async () => {
  pikaProc?.kill();
  sqs?.destroy();
  await conn?.close().catch(() => undefined);
  await browser?.close();
  await redrive?.server.stop();
  redrive?.server.cleanup();
});

const rows = (selector: string) =>
  page.$$eval(selector, (trs) =>
    trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent?.trim() ?? '')),
  );

test('Connections: SQS clients by access key, the AMQP connections with their consumers; Close closes one', {
  skip,
}, async () => {
  await openPage(page, `${redrive.server.url}/console/connections`);
  const [sqsRow] = await rows('#sqs-clients-table tbody tr[data-access-key="AKIDCONSOLE"]');
  assert.equal(sqsRow?.[1], '127.0.0.1');
  assert.ok(Number(sqsRow?.[2]) >= 1, JSON.stringify(sqsRow));

  const connections = await rows('#amqp-connections-table tbody tr');
  assert.equal(connections.length, pika ? 1 : 2);
  const amqplibRow = connections.find((r) => /amqplib-worker · amqplib/.test(r[3]!))!;
  // Protocol, user, client, channels, consumers, prefetch.
  assert.deepEqual(amqplibRow.slice(1, 6), ['AMQP 0-9-1', 'guest', 'amqplib-worker · amqplib 2.3.1', '1', '1']);
  assert.equal(amqplibRow[6], '5');
  const consumers = await rows('#amqp-consumers-table tbody tr');
  const tags = consumers.map((r) => r[0]).sort();
  assert.deepEqual(tags, pika ? ['amqplib-consumer'] : ['amqplib-consumer', 'pika-consumer']);
  const unacked = consumers.reduce((n, r) => n + Number(r[6]), 0);
  assert.equal(
    unacked,
    5,
    'all five messages (four AMQP, one SQS) are delivered to the two consumers and unacknowledged',
  );
  if (!pika) {
    const pikaRow = connections.find((r) => /pika/i.test(r[3]!))!;
    assert.equal(pikaRow[6], '2');
    assert.equal(consumers.find((r) => r[0] === 'pika-consumer')![5], '2');
  }
  await screenshot(page, 'connections');

  const closed = new Promise<string>((resolve) =>
    conn.on('close', (e: Error | undefined) => resolve(String(e?.message))),
  );
  conn.on('error', () => undefined);
  const row = page.locator('#amqp-connections-table tbody tr', { hasText: 'amqplib-worker' });
  await row.locator('button.close-connection').click();
  await page.waitForSelector('dialog.confirm[open]');
  assert.match(
    (await page.textContent('dialog.confirm')) ?? '',
    /320 CONNECTION_FORCED; its unacknowledged messages go back/,
  );
  await page.click('dialog.confirm button[value="confirm"]');
  assert.match(
    await closed,
    /320 \(CONNECTION-FORCED\) with message "CONNECTION_FORCED - Closed from the Redrive console"/,
  );
  await page.waitForFunction(
    () => !document.querySelector('#amqp-connections-table')?.textContent?.includes('amqplib-worker'),
  );
  assert.match((await page.textContent('#flash')) ?? '', /Closed 127\.0\.0\.1:\d+ -> /);
  assert.match(
    await logMatch(redrive.server.output, /"by":"console"/),
    /"by":"console".*"reason":"Closed from the Redrive console".*AMQP connection closed through the management API/,
  );
  assert.deepEqual(errors, []);
});

test('Exchanges: each exchange with the bindings from it', { skip }, async () => {
  await openPage(page, `${redrive.server.url}/console/exchanges`);
  const exchanges = await rows('#exchanges-table tbody tr');
  assert.deepEqual(
    exchanges.map((r) => r[0]),
    ['(default)', 'amq.direct', 'amq.fanout', 'amq.headers', 'amq.match', 'amq.topic', 'orders-x'],
  );
  const orders = exchanges.find((r) => r[0] === 'orders-x')!;
  assert.deepEqual(orders.slice(1), ['topic', 'durable', 'order.# → queue orders']);
  assert.equal(exchanges[0]![3], '1 queue, each by its name');
  await screenshot(page, 'exchanges');
  assert.deepEqual(errors, []);
});

test("a queue's page: its AMQP consumers and the SQS long polls waiting on it", { skip }, async () => {
  await sqs.send(new CreateQueueCommand({ QueueName: 'idle' }));
  const waiting = [0, 1].map(() =>
    sqs.send(new ReceiveMessageCommand({ QueueUrl: `${redrive.server.url}/000000000000/idle`, WaitTimeSeconds: 3 })),
  );
  await pause(300);
  await openPage(page, `${redrive.server.url}/console/queues/idle`);
  await page.waitForSelector('#long-poll-count');
  assert.equal(await page.textContent('#long-poll-count'), 'SQS long polls waiting now: 2');
  assert.deepEqual(await page.$$eval('#long-poll-receivers code', (els) => els.map((e) => e.textContent)), [
    '127.0.0.1',
    '127.0.0.1',
  ]);
  await openPage(page, `${redrive.server.url}/console/queues/orders`);
  await page.waitForSelector('#long-poll-count');
  const tags = (await rows('#queue-consumers-table tbody tr')).map((r) => r[0]);
  assert.deepEqual(tags, pika ? [] : ['pika-consumer']);
  await Promise.all(waiting);
  assert.deepEqual(errors, []);
});

test("the console's broker views need the session and its CSRF token", { skip }, async () => {
  const url = `${redrive.server.url}/console/api/rabbitmq/connections`;
  assert.equal((await fetch(url)).status, 401, 'no session');
  await openPage(page, `${redrive.server.url}/console/connections`);
  const cookie = (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
  const csrf = await page.getAttribute('meta[name="redrive-csrf"]', 'content');
  assert.equal((await fetch(url, { headers: { cookie } })).status, 403, 'no CSRF token');
  assert.equal((await fetch(url, { method: 'DELETE', headers: { cookie, 'x-redrive-csrf': 'forged' } })).status, 403);
  const ok = await fetch(url, { headers: { cookie, 'x-redrive-csrf': csrf! } });
  assert.equal(ok.status, 200);
  assert.ok(Array.isArray(await ok.json()));
  assert.equal(
    (await fetch(url, { headers: { cookie, 'x-redrive-csrf': csrf!, 'sec-fetch-site': 'cross-site' } })).status,
    403,
    'from another site',
  );
});

test('an AMQP 1.0 connection: its protocol, its session, and its receiving link as a consumer', { skip }, async () => {
  await sqs.send(new CreateQueueCommand({ QueueName: 'rhea-orders' }));
  for (const body of ['a', 'b', 'c'])
    await sqs.send(
      new SendMessageCommand({ QueueUrl: `${redrive.server.url}/000000000000/rhea-orders`, MessageBody: body }),
    );
  const c = await connect(redrive.port);
  try {
    const r = receiver(c, 'rhea-orders', { name: 'rhea-orders-link' });
    r.link.add_credit(20);
    await r.next(3);
    const held = 3;
    await openPage(page, `${redrive.server.url}/console/connections`);
    const row = (await rows('#amqp-connections-table tbody tr')).find((x) => x[1] === 'AMQP 1-0');
    assert.ok(row, 'the 1.0 connection is listed');
    // User, client (rhea's container id), sessions, links, no prefetch (credit is per link), unsettled.
    assert.deepEqual(row.slice(2, 8), ['guest', c.container.id, '1', '1', '–', String(held)]);
    const link = (await rows('#amqp-consumers-table tbody tr')).find((x) => x[0] === 'rhea-orders-link');
    assert.ok(link, 'the receiving link is a consumer');
    // Queue, session, user, ack (unsettled deliveries), credit left, unsettled.
    assert.deepEqual(link.slice(1), [
      'rhea-orders',
      `${row[0]} (0)`,
      'guest',
      'manual',
      String(20 - held),
      String(held),
    ]);
    await screenshot(page, 'connections-amqp10');

    const api = await fetch(`${redrive.server.url}/api/connections`, {
      headers: { authorization: `Basic ${Buffer.from('guest:guest').toString('base64')}` },
    });
    const listed = ((await api.json()) as { name: string; protocol: string; channels: number }[]).find(
      (x) => x.name === row[0],
    );
    assert.deepEqual(listed && [listed.protocol, listed.channels], ['AMQP 1-0', 1]);
  } finally {
    await close(c);
  }
  assert.deepEqual(errors, []);
});

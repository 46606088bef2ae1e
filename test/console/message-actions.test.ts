/**
 * The operator's message actions in a real browser against a real server: each button is
 * clicked and confirmed, and the message is then checked as the AWS SDK sees it; the
 * selection move, a search's match count and a DLQ's top rejection reasons.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ReceiveMessageCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { browserMissing, logMatch, openPage, pageErrors, useConsole } from './browser.js';

const skip = browserMissing();
const ARN = 'arn:aws:sqs:us-east-1:000000000000:';
const ctx = useConsole(skip);

async function api(action: string, body: Record<string, unknown>): Promise<Record<string, any>> {
  const res = await fetch(`${ctx.server().url}/`, {
    method: 'POST',
    headers: { 'x-amz-target': `AmazonSQS.${action}`, 'content-type': 'application/x-amz-json-1.0' },
    body: JSON.stringify(body),
  });
  assert.equal(res.status, 200, await res.clone().text());
  return res.json() as Promise<Record<string, any>>;
}

const queue = async (name: string, dlq?: string) =>
  (
    await api('CreateQueue', {
      QueueName: name,
      Attributes: dlq
        ? { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: `${ARN}${dlq}`, maxReceiveCount: 1 }) }
        : undefined,
    })
  ).QueueUrl as string;

/** Sends `body` to `src` and rejects it into its DLQ with `reason`; the message's id in the DLQ. */
async function rejected(sqs: SQSClient, src: string, dlq: string, body: string, reason: string): Promise<string> {
  await sqs.send(new SendMessageCommand({ QueueUrl: src, MessageBody: body }));
  const [m] = (await sqs.send(new ReceiveMessageCommand({ QueueUrl: src, VisibilityTimeout: 60 }))).Messages ?? [];
  await api('RejectMessage', { QueueUrl: src, ReceiptHandle: m!.ReceiptHandle, Reason: reason });
  const all = (await api('PeekMessages', { QueueUrl: dlq, MaxResults: 100 })).Messages as {
    MessageId: string;
    Body: string;
  }[];
  return all.find((x) => x.Body === body)!.MessageId;
}

const receiveAll = async (sqs: SQSClient, url: string) =>
  (
    await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        MaxNumberOfMessages: 10,
        VisibilityTimeout: 0,
        AttributeNames: ['All'],
      }),
    )
  ).Messages ?? [];

describe('message actions in the console', { skip }, () => {
  test('Make visible now and Change visibility… on an in-flight message', async () => {
    const page = ctx.page();
    const errors = pageErrors(page);
    const sqs = ctx.server().client();
    const q = await queue('ma-held');
    const { MessageId } = await sqs.send(new SendMessageCommand({ QueueUrl: q, MessageBody: 'stuck' }));
    await sqs.send(new ReceiveMessageCommand({ QueueUrl: q, VisibilityTimeout: 3600 }));
    const messagePage = `${ctx.server().url}/console/queues/ma-held/messages/${MessageId}`;
    await openPage(page, messagePage);
    await page.click('#make-visible');
    await page.click('dialog.confirm button:has-text("Make visible")');
    await page.waitForSelector(`text=Message ${MessageId} is visible again.`);
    assert.match(
      await logMatch(() => ctx.server().output(), /message visibility changed by id/),
      /message visibility changed by id/,
    );
    const [got] =
      (await sqs.send(new ReceiveMessageCommand({ QueueUrl: q, VisibilityTimeout: 5, AttributeNames: ['All'] })))
        .Messages ?? [];
    assert.equal(got?.MessageId, MessageId, 'the SDK receives it at once');
    assert.equal(got?.Attributes?.ApproximateReceiveCount, '2');

    await page.waitForLoadState('load');
    await openPage(page, messagePage);
    await page.click('#change-visibility');
    await page.fill('#visibility-timeout', '3600');
    const before = Date.now();
    await page.click('dialog.confirm button:has-text("Change visibility")');
    await page.waitForSelector(`text=Message ${MessageId} is hidden for 3600 s from now.`);
    const [peeked] = (await api('PeekMessages', { QueueUrl: q })).Messages;
    assert.equal(peeked.State, 'IN_FLIGHT');
    assert.ok(peeked.VisibleTimestamp >= before + 3_500_000, 'hidden for an hour from the change');
    assert.deepEqual(await receiveAll(sqs, q), [], 'the SDK receives nothing');
    assert.deepEqual(errors, []);
  });

  test('Redrive to source and Move to… on a dead-lettered message', async () => {
    const page = ctx.page();
    const sqs = ctx.server().client();
    const dlq = await queue('ma-dlq');
    const src = await queue('ma-src', 'ma-dlq');
    const other = await queue('ma-other');
    const first = await rejected(sqs, src, dlq, 'first', 'broken');
    const second = await rejected(sqs, src, dlq, 'second', 'broken');

    await openPage(page, `${ctx.server().url}/console/queues/ma-dlq/messages/${first}`);
    await page.click('#redrive-message');
    await page.click('dialog.confirm button:has-text("Redrive to ma-src")');
    await page.waitForURL(/\/console\/queues\/ma-src$/);
    const back = await receiveAll(sqs, src);
    assert.deepEqual(
      back.map((m) => m.Body),
      ['first'],
    );
    assert.notEqual(back[0]!.MessageId, first, 'a redriven message is a new message');

    await openPage(page, `${ctx.server().url}/console/queues/ma-dlq/messages/${second}`);
    await page.click('#move-message');
    await page.fill('#move-destination', 'ma-other');
    await page.click('dialog.confirm button:has-text("Move")');
    await page.waitForURL(/\/console\/queues\/ma-other$/);
    assert.deepEqual(
      (await receiveAll(sqs, other)).map((m) => m.Body),
      ['second'],
    );
    assert.deepEqual((await api('PeekMessages', { QueueUrl: dlq })).Messages, [], 'each message is in one queue only');
    assert.match(
      await logMatch(() => ctx.server().output(), /messages moved by id[\s\S]*messages moved by id/),
      /ma-other/,
    );
  });

  test('Move selected…, a search’s match count and the top rejection reasons', async () => {
    const page = ctx.page();
    const sqs = ctx.server().client();
    const dlq = await queue('sel2-dlq');
    const src = await queue('sel2', 'sel2-dlq');
    await queue('sel2-replay');
    for (const [body, reason] of [
      ['pick-one', 'timeout'],
      ['pick-two', 'timeout'],
      ['json-thing', 'bad json'],
      ['keep', 'timeout'],
    ])
      await rejected(sqs, src, dlq, body!, reason!);

    await openPage(page, `${ctx.server().url}/console/queues/sel2-dlq`);
    await page.waitForSelector('#rejection-reasons');
    const rows = await page
      .locator('#rejection-reasons tbody tr')
      .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
    assert.deepEqual(rows, [
      ['timeout', '3'],
      ['bad json', '1'],
    ]);

    await openPage(page, `${ctx.server().url}/console/queues/sel2-dlq/messages?BodyContains=pick`);
    await page.waitForSelector('#match-count:has-text("match")');
    assert.equal(await page.textContent('#match-count'), '2 messages match in sel2-dlq.');
    for (const body of ['pick-one', 'pick-two'])
      await page.locator('#messages-table tbody tr', { hasText: body }).locator('input[type=checkbox]').check();
    await page.click('#move-selected');
    await page.fill('#move-selected-destination', 'sel2-replay');
    await page.click('dialog.confirm button:has-text("Move 2")');
    await page.waitForSelector('text=Moved 2 of 2.');
    assert.deepEqual(
      (await receiveAll(sqs, `${ctx.server().url}/000000000000/sel2-replay`)).map((m) => m.Body).sort(),
      ['pick-one', 'pick-two'],
    );
    const left = (await api('PeekMessages', { QueueUrl: dlq })).Messages.map((m: { Body: string }) => m.Body).sort();
    assert.deepEqual(left, ['json-thing', 'keep']);
  });

  test('Release deliveries… on a queue page: confirmed, done with ReleaseAmqpDeliveries, logged with who asked', async () => {
    const page = ctx.page();
    const errors = pageErrors(page);
    await queue('rel-q');
    await openPage(page, `${ctx.server().url}/console/queues/rel-q`);
    await page.click('#release-deliveries');
    assert.match((await page.textContent('dialog.confirm')) ?? '', /Consumers of running servers keep theirs/);
    await page.click('dialog.confirm button:has-text("Cancel")');
    assert.doesNotMatch(ctx.server().output(), /AMQP deliveries released by an operator/, 'cancelled: nothing asked');
    await page.click('#release-deliveries');
    await page.click('dialog.confirm button:has-text("Release deliveries")');
    // This server holds its own deliveries and no process of its store stopped: nothing to release.
    await page.waitForSelector('text=No stopped server process held deliveries; nothing to release.');
    const log = await logMatch(() => ctx.server().output(), /AMQP deliveries released by an operator/);
    assert.match(
      log,
      /"by":"000000000000".*"released":0.*AMQP deliveries released by an operator|AMQP deliveries released by an operator.*"by":"000000000000"/,
    );
    assert.deepEqual(errors, []);
  });
});

/**
 * The console and regions (docs/regions.md): the overview lists every region's queues
 * with a region column, and a queue's pages act in that queue's region.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CreateQueueCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { browserMissing, openPage, pageErrors, useConsole } from './browser.js';

const skip = browserMissing();
const running = useConsole(skip);

test('the overview shows the same name in two regions as two rows, and each links to its own queue', {
  skip,
}, async () => {
  const [server, page] = [running.server(), running.page()];
  const errors = pageErrors(page);
  const client = (region: string) =>
    new SQSClient({
      endpoint: server.url,
      region,
      credentials: { accessKeyId: 'x', secretAccessKey: 'y' },
      maxAttempts: 1,
    });
  await client('us-east-1').send(new CreateQueueCommand({ QueueName: 'orders' }));
  const west = client('eu-west-1');
  const { QueueUrl } = await west.send(new CreateQueueCommand({ QueueName: 'orders' }));
  for (const body of ['a', 'b']) await west.send(new SendMessageCommand({ QueueUrl, MessageBody: body }));

  await openPage(page, `${server.url}/console/`);
  const rows = page.locator('#queues-table tbody tr[data-queue="orders"]');
  assert.equal(await rows.count(), 2);
  const cells = async (i: number) => (await rows.nth(i).locator('td').allInnerTexts()).slice(0, 5);
  assert.deepEqual(await cells(0), ['orders', 'eu-west-1', 'Standard', '', '2']);
  assert.deepEqual(await cells(1), ['orders', 'us-east-1', 'Standard', '', '0']);

  await rows.nth(0).locator('a').first().click();
  await page.waitForSelector('body[data-ready="true"]');
  assert.match(page.url(), /\/console\/queues\/orders\?region=eu-west-1$/);
  await page.getByText('arn:aws:sqs:eu-west-1:000000000000:orders').waitFor();
  assert.deepEqual(errors, []);
});

/**
 * AMQP dead letters on the SQS side: a message dead-lettered through a dead-letter
 * exchange carries its history to SQS receivers (RedriveDeathHistory), its queue is a
 * dead-letter queue for ListDeadLetterSourceQueues, and StartMessageMoveTask redrives it
 * back to the queue it died in, where an AMQP consumer gets it with its x-death header.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ConsumeMessage } from 'amqplib';
import {
  ListDeadLetterSourceQueuesCommand,
  ListMessageMoveTasksCommand,
  ReceiveMessageCommand,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import { rawJson } from '../e2e/helpers.js';
import { pause, useMixedServer } from './support.js';

describe('AMQP dead letters through SQS', () => {
  const server = useMixedServer();
  const arn = (q: string) => `arn:aws:sqs:us-east-1:000000000000:${q}`;

  test('an AMQP dead letter is seen with its history over SQS, redriven by StartMessageMoveTask and consumed over AMQP', async () => {
    const { conn, sqs, url } = server();
    const ch = await conn.createConfirmChannel();
    await ch.assertExchange('mx-dlx', 'fanout');
    await ch.assertQueue('mx-src', { arguments: { 'x-dead-letter-exchange': 'mx-dlx' } });
    await ch.assertQueue('mx-dlq');
    await ch.bindQueue('mx-dlq', 'mx-dlx', '');
    ch.sendToQueue('mx-src', Buffer.from('redrive me'), { headers: { trace: 't-1' }, expiration: '600000' });
    await ch.waitForConfirms();
    const m = await ch.get('mx-src');
    assert.ok(m);
    ch.reject(m, false);
    await pause(200);

    // Looked at without receiving it (PeekMessages, as the console does): the basic.get was its
    // first receive, and the copy keeps that time, as a dead letter on the SQS road does.
    const peeked = await rawJson(
      server().redrive.server.url,
      'AmazonSQS.PeekMessages',
      JSON.stringify({ QueueUrl: url('mx-dlq') }),
    );
    const [copy] = (peeked.json.Messages ?? []) as { Attributes: Record<string, string> }[];
    assert.equal(copy?.Attributes.ApproximateReceiveCount, '1');
    assert.match(copy?.Attributes.ApproximateFirstReceiveTimestamp ?? 'none', /^\d{13}$/, 'its first receive time');

    const sources = await sqs.send(new ListDeadLetterSourceQueuesCommand({ QueueUrl: url('mx-dlq') }));
    assert.deepEqual(
      sources.queueUrls,
      [url('mx-src')],
      'the queue bound to the dead-letter exchange is a dead-letter queue of mx-src',
    );
    const seen = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: url('mx-dlq'),
        MessageSystemAttributeNames: ['RedriveDeathHistory', 'RedriveFirstDeathReason'] as never[],
        VisibilityTimeout: 0,
      }),
    );
    const [dead] = seen.Messages ?? [];
    assert.equal(dead?.Body, 'redrive me');
    const attrs = dead!.Attributes as Record<string, string>;
    const history = JSON.parse(attrs.RedriveDeathHistory!) as {
      queue: string;
      reason: string;
      count: number;
      exchange: string;
      routingKeys: string[];
      originalExpiration: string;
    }[];
    assert.deepEqual(
      history.map((d) => [d.queue, d.reason, d.count, d.exchange, d.routingKeys, d.originalExpiration]),
      [['mx-src', 'rejected', 1, '', ['mx-src'], '600000']],
    );
    assert.equal(attrs.RedriveFirstDeathReason, 'rejected');

    await sqs.send(new StartMessageMoveTaskCommand({ SourceArn: arn('mx-dlq') }));
    for (let i = 0; i < 50; i++) {
      const { Results } = await sqs.send(new ListMessageMoveTasksCommand({ SourceArn: arn('mx-dlq') }));
      if (Results?.[0]?.Status === 'COMPLETED') break;
      await pause(100);
    }
    const back = await new Promise<ConsumeMessage>((resolve) => void ch.consume('mx-src', (x) => x && resolve(x)));
    assert.equal(back.content.toString(), 'redrive me');
    assert.equal(back.properties.headers?.trace, 't-1');
    assert.equal(back.properties.expiration, undefined, 'the expiration went with the first death');
    const xDeath = back.properties.headers?.['x-death'] as {
      queue: string;
      reason: string;
      count: number;
      'original-expiration': string;
    }[];
    assert.deepEqual(
      xDeath.map((d) => [d.queue, d.reason, d.count, d['original-expiration']]),
      [['mx-src', 'rejected', 1, '600000']],
    );
    assert.equal(back.properties.headers?.['x-first-death-queue'], 'mx-src');
    ch.ack(back);
    await pause(100);
    assert.equal((await ch.checkQueue('mx-dlq')).messageCount, 0, 'moved, not copied');
    await ch.close();
  });
});

/**
 * One count per event over AMQP (docs/monitoring.md): a publish is a send, a delivery a
 * receive, an ack a delete, a requeue nothing, a rejection through a dead-letter exchange
 * dead-lettered on the queue it left and an arrival (not a send) on each queue a copy
 * reaches. /metrics and GetQueueActivity must agree with that.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import type { ChannelModel, GetMessage } from 'amqplib';
import { rawJson } from '../e2e/helpers.js';
import { total } from '../metrics/scrape.js';
import { pause, useMixedServer, type AmqpServer } from './support.js';

describe('AMQP counts as SQS does', () => {
  const server = useMixedServer();
  let redrive: AmqpServer;
  let conn: ChannelModel;
  before(() => ({ redrive, conn } = server()));

  test('publish, get, ack, requeue and a rejection through a dead-letter exchange, on /metrics and GetQueueActivity', async () => {
    const ch = await conn.createConfirmChannel();
    await ch.assertExchange('cnt-dlx', 'fanout');
    await ch.assertQueue('cnt-dead-a');
    await ch.assertQueue('cnt-dead-b');
    await ch.bindQueue('cnt-dead-a', 'cnt-dlx', '');
    await ch.bindQueue('cnt-dead-b', 'cnt-dlx', '');
    await ch.assertQueue('cnt-work', { arguments: { 'x-dead-letter-exchange': 'cnt-dlx' } });
    for (const body of ['a', 'b', 'c']) ch.sendToQueue('cnt-work', Buffer.from(body));
    await ch.waitForConfirms();

    const get = async () => {
      const m = await ch.get('cnt-work');
      assert.ok(m, 'a message');
      return m as GetMessage;
    };
    ch.ack(await get());
    ch.nack(await get(), false, true); // requeued: visible again, no count
    await pause(200);
    ch.nack(await get(), false, false); // dead-lettered: one copy to each queue the exchange routes to
    await pause(300);

    const want: Record<
      string,
      [sent: number, received: number, deleted: number, deadLettered: number, arrivals: number]
    > = {
      'cnt-work': [3, 3, 1, 2, 0],
      'cnt-dead-a': [0, 0, 0, 0, 1],
      'cnt-dead-b': [0, 0, 0, 0, 1],
    };
    const metrics = await (await fetch(`${redrive.server.url}/metrics`)).text();
    for (const [q, counts] of Object.entries(want)) {
      assert.deepEqual(
        [
          total(metrics, 'redrive_number_of_messages_sent_total', { queue_name: q }),
          total(metrics, 'redrive_number_of_messages_received_total', { queue_name: q }),
          total(metrics, 'redrive_number_of_messages_deleted_total', { queue_name: q }),
          total(metrics, 'redrive_messages_dead_lettered_total', { queue_name: q }) +
            total(metrics, 'redrive_messages_dropped_total', { queue_name: q }),
          total(metrics, 'redrive_messages_dead_lettered_total', { dead_letter_queue: q }),
        ],
        counts,
        `/metrics of ${q}`,
      );
      const r = await rawJson(
        redrive.server.url,
        'AmazonSQS.GetQueueActivity',
        JSON.stringify({ QueueUrl: `${redrive.server.url}/000000000000/${q}` }),
      );
      const minutes = r.json.Minutes as Record<string, number>[];
      const sum = (k: string) => minutes.reduce((n, m) => n + m[k]!, 0);
      assert.deepEqual(
        [sum('Sent'), sum('Received'), sum('Deleted'), sum('DeadLettered'), sum('DeadLetterArrivals')],
        counts,
        `GetQueueActivity of ${q}`,
      );
    }
    await ch.close();
  });
});

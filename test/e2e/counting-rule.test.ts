/**
 * One count per event (docs/monitoring.md): sends, receives, deletes, a visibility
 * expiry, dead-lettering, a redrive (move task), a purge and a retention expiry, driven
 * against a real server on a manual clock; then every surface that counts (/metrics,
 * GetQueueActivity in both protocols, `redrive queues activity`) must say what the
 * table says, queue by queue.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  DeleteMessageCommand,
  PurgeQueueCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  StartMessageMoveTaskCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { useServerProcess, type ServerProcess } from '../support/server-process.js';
import { cliAt } from '../cli/support.js';
import { total } from '../metrics/scrape.js';
import { arn, create, redrivePolicy } from './death-helpers.js';
import { runToEnd } from './dlq-helpers.js';
import { rawJson, receive, SDK_HEADER } from './helpers.js';

let server: ServerProcess;
let sqs: SQSClient;
useServerProcess({ storage: 'sqlite', manualClock: true }, (s) => {
  server = s;
  sqs = s.client();
});

interface Counts {
  sent: number;
  received: number;
  deleted: number;
  deadLettered: number;
  deadLetterArrivals: number;
}

/** The table of docs/monitoring.md applied to what the test does below. */
const EXPECTED: Record<string, Counts> = {
  // 5 client sends and 4 redriven in; 5 received (the 3 not deleted then come back when
  // their visibility lapses, which counts nothing); 2 deleted; 3 dead-lettered.
  'cr-src': { sent: 9, received: 5, deleted: 2, deadLettered: 3, deadLetterArrivals: 0 },
  // 1 client send; 3 dead-letter arrivals (not sends); the redrive receives and deletes all 4.
  'cr-dlq': { sent: 1, received: 4, deleted: 4, deadLettered: 0, deadLetterArrivals: 3 },
  // A purge deletes without counting a delete.
  'cr-purge': { sent: 2, received: 0, deleted: 0, deadLettered: 0, deadLetterArrivals: 0 },
  // Retention deletes without counting a delete.
  'cr-retention': { sent: 2, received: 0, deleted: 0, deadLettered: 0, deadLetterArrivals: 0 },
};

const sum = (minutes: Record<string, number>[], k: string) => minutes.reduce((n, m) => n + m[k]!, 0);

test('every event moves the same counters on /metrics, GetQueueActivity and the CLI, as docs/monitoring.md says', async () => {
  const dlq = await create(sqs, 'cr-dlq');
  const src = await create(sqs, 'cr-src', { RedrivePolicy: redrivePolicy('cr-dlq', 1) });
  const purge = await create(sqs, 'cr-purge');
  const retention = await create(sqs, 'cr-retention', { MessageRetentionPeriod: '60' });

  await sqs.send(
    new SendMessageBatchCommand({ QueueUrl: src, Entries: ['a', 'b', 'c'].map((b) => ({ Id: b, MessageBody: b })) }),
  );
  for (const body of ['d', 'e']) await sqs.send(new SendMessageCommand({ QueueUrl: src, MessageBody: body }));
  await sqs.send(new SendMessageCommand({ QueueUrl: dlq, MessageBody: 'sent straight to the DLQ' }));
  // A consumer receives all five and deletes two; the others' visibility lapses at once.
  const got = await receive(sqs, src, { MaxNumberOfMessages: 10, VisibilityTimeout: 0 });
  assert.equal(got.length, 5);
  for (const m of got.slice(0, 2))
    await sqs.send(new DeleteMessageCommand({ QueueUrl: src, ReceiptHandle: m.ReceiptHandle! }));
  // The next receive finds the three past maxReceiveCount: they move to the DLQ and it returns none.
  assert.equal((await receive(sqs, src, { MaxNumberOfMessages: 10 })).length, 0);

  // A redrive of the whole DLQ (its 3 dead letters and the message sent to it) back to the source.
  await sqs.send(new StartMessageMoveTaskCommand({ SourceArn: arn('cr-dlq'), DestinationArn: arn('cr-src') }));
  const task = await runToEnd(server, sqs, arn('cr-dlq'));
  assert.equal(task.Status, 'COMPLETED');
  assert.equal(task.ApproximateNumberOfMessagesMoved, 4);

  await sqs.send(
    new SendMessageBatchCommand({ QueueUrl: purge, Entries: ['p1', 'p2'].map((b) => ({ Id: b, MessageBody: b })) }),
  );
  await sqs.send(new PurgeQueueCommand({ QueueUrl: purge }));
  await sqs.send(
    new SendMessageBatchCommand({ QueueUrl: retention, Entries: ['r1', 'r2'].map((b) => ({ Id: b, MessageBody: b })) }),
  );
  // Past the 60 s retention: the sweep (once a second on the server's clock) deletes both.
  for (let i = 0; i < 70; i++) await server.advanceClock(1_000);
  const gone = async () =>
    (
      await rawJson(
        server.url,
        'AmazonSQS.GetQueueAttributes',
        JSON.stringify({ QueueUrl: retention, AttributeNames: ['ApproximateNumberOfMessages'] }),
      )
    ).json as { Attributes: Record<string, string> };
  for (let i = 0; i < 50 && (await gone()).Attributes.ApproximateNumberOfMessages !== '0'; i++)
    await server.advanceClock(1_000);
  assert.equal((await gone()).Attributes.ApproximateNumberOfMessages, '0', 'retention deleted the messages');

  const metrics = await (await fetch(`${server.url}/metrics`)).text();
  const cli = cliAt(server.url);
  for (const [name, want] of Object.entries(EXPECTED)) {
    const url = `${server.url}/000000000000/${name}`;
    // /metrics: CloudWatch's names and Redrive's dead-letter counter (by source, and by DLQ for arrivals).
    assert.deepEqual(
      {
        sent: total(metrics, 'redrive_number_of_messages_sent_total', { queue_name: name }),
        received: total(metrics, 'redrive_number_of_messages_received_total', { queue_name: name }),
        deleted: total(metrics, 'redrive_number_of_messages_deleted_total', { queue_name: name }),
        deadLettered:
          total(metrics, 'redrive_messages_dead_lettered_total', { queue_name: name }) +
          total(metrics, 'redrive_messages_dropped_total', { queue_name: name }) +
          total(metrics, 'redrive_dead_letter_cycles_broken_total', { queue_name: name }),
        deadLetterArrivals: total(metrics, 'redrive_messages_dead_lettered_total', { dead_letter_queue: name }),
      },
      want,
      `/metrics of ${name}`,
    );

    // GetQueueActivity (the console's chart reads it), JSON protocol.
    const r = await rawJson(server.url, 'AmazonSQS.GetQueueActivity', JSON.stringify({ QueueUrl: url }));
    assert.equal(r.status, 200, r.text);
    const minutes = r.json.Minutes as Record<string, number>[];
    assert.deepEqual(
      {
        sent: sum(minutes, 'Sent'),
        received: sum(minutes, 'Received'),
        deleted: sum(minutes, 'Deleted'),
        deadLettered: sum(minutes, 'DeadLettered'),
        deadLetterArrivals: sum(minutes, 'DeadLetterArrivals'),
      },
      want,
      `GetQueueActivity of ${name}`,
    );

    // The Query protocol carries the same numbers.
    const q = await (
      await fetch(server.url, {
        // An unsigned form in open mode must say it comes from a client, not a web page (docs/security.md).
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...SDK_HEADER },
        body: new URLSearchParams({ Action: 'GetQueueActivity', Version: '2012-11-05', QueueUrl: url }).toString(),
      })
    ).text();
    const xmlSum = (k: string) =>
      [...q.matchAll(new RegExp(`<${k}>(\\d+)</${k}>`, 'g'))].reduce((n, m) => n + Number(m[1]), 0);
    assert.deepEqual(
      {
        sent: xmlSum('Sent'),
        received: xmlSum('Received'),
        deleted: xmlSum('Deleted'),
        deadLettered: xmlSum('DeadLettered'),
        deadLetterArrivals: xmlSum('DeadLetterArrivals'),
      },
      want,
      `GetQueueActivity (Query) of ${name}`,
    );

    // The CLI prints the same totals as the console.
    const c = await cli('queues', 'activity', name);
    assert.equal(c.code, 0, c.stderr);
    assert.equal(
      c.stdout,
      `${name}, last hour: ${want.sent} sent, ${want.received} received, ${want.deleted} deleted, ` +
        `${want.deadLettered} dead-lettered, ${want.deadLetterArrivals} arrived by dead-lettering; ${minutes.at(-1)!.Depth} in the queue now.\n`,
    );
  }
  // Redrive's own counters agree: the move task moved 4 out of the DLQ, as its receive and delete say.
  assert.equal(total(metrics, 'redrive_move_task_messages_moved_total', { queue_name: 'cr-dlq' }), 4);
  assert.equal(
    total(metrics, 'redrive_number_of_empty_receives_total', { queue_name: 'cr-src' }),
    1,
    'the receive that only dead-lettered',
  );
});

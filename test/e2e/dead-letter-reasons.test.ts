/** The four dead-letter reasons, the death history, TTL, length limits and cycles, through the AWS SDK. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  DeleteQueueCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SetQueueAttributesCommand,
  StartMessageMoveTaskCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { useServerProcess, type ServerProcess } from '../support/server-process.js';
import { runToEnd, waitFor } from './dlq-helpers.js';
import { assertSqsError, receive, SDK_HEADER } from './helpers.js';
import {
  advanceUntilDepth,
  arn,
  attr,
  create,
  entries,
  history,
  peek,
  receiveWithHistory,
  redrivePolicy,
  reject,
} from './death-helpers.js';

let server: ServerProcess;
let sqs: SQSClient;

useServerProcess({ storage: 'memory', manualClock: true }, (s) => {
  server = s;
  sqs = s.client();
});

const send = (QueueUrl: string, MessageBody: string, extra: Record<string, unknown> = {}) =>
  sqs.send(new SendMessageCommand({ QueueUrl, MessageBody, ...extra }));

describe('rejected', () => {
  test('RejectMessage dead-letters at once with the reason text; the history is opt-in', async () => {
    const dlq = await create(sqs, 'rej-dlq');
    const src = await create(sqs, 'rej', { RedrivePolicy: redrivePolicy('rej-dlq') });
    await send(src, 'bad');
    const [m] = await receive(sqs, src);
    const res = await reject(server, src, m!.ReceiptHandle!, 'schema mismatch');
    assert.equal(res.status, 200, res.text);
    const dead = await receiveWithHistory(sqs, dlq, { VisibilityTimeout: 0 });
    assert.equal(dead.Body, 'bad');
    const [d] = history(dead);
    assert.deepEqual(
      [d!.queue, d!.queueArn, d!.reason, d!.count, d!.rejectReason],
      ['rej', arn('rej'), 'rejected', 1, 'schema mismatch'],
    );
    assert.equal(attr(dead, 'RedriveFirstDeathReason'), 'rejected');
    assert.equal(attr(dead, 'RedriveLastDeathQueue'), 'rej');
    const [plain] = await receive(sqs, dlq, { MessageSystemAttributeNames: ['All'] });
    assert.equal(attr(plain!, 'DeadLetterQueueSourceArn'), arn('rej'));
    assert.ok(
      Object.keys(plain!.Attributes!).every((k) => !k.startsWith('Redrive')),
      '`All` leaves the extensions out',
    );
  });

  test('a stale receipt, and a queue without a dead-letter queue, are refused and change nothing', async () => {
    const lonely = await create(sqs, 'rej-lonely');
    await send(lonely, 'keep');
    const [m] = await receive(sqs, lonely, { VisibilityTimeout: 30 });
    const res = await reject(server, lonely, m!.ReceiptHandle!);
    assert.equal(res.status, 400);
    assert.match(res.text, /no dead-letter queue/);
    await server.advanceClock(31_000);
    assert.equal((await receive(sqs, lonely)).length, 1, 'the message is still there');
    await create(sqs, 'rej2-dlq');
    const src = await create(sqs, 'rej2', { RedrivePolicy: redrivePolicy('rej2-dlq') });
    await send(src, 'x');
    const [first] = await receive(sqs, src, { VisibilityTimeout: 0 });
    await receive(sqs, src, { VisibilityTimeout: 30 });
    assert.equal((await reject(server, src, first!.ReceiptHandle!)).status, 400, 'only the latest receipt rejects');
  });
});

test('RejectMessage and the history in PeekMessages work over the Query protocol too', async () => {
  const dlq = await create(sqs, 'rejq-dlq');
  const src = await create(sqs, 'rejq', { RedrivePolicy: redrivePolicy('rejq-dlq') });
  await send(src, 'q');
  const [m] = await receive(sqs, src);
  const query = (params: Record<string, string>) =>
    fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...SDK_HEADER },
      body: new URLSearchParams({ Version: '2012-11-05', ...params }).toString(),
    });
  const res = await query({
    Action: 'RejectMessage',
    QueueUrl: src,
    ReceiptHandle: m!.ReceiptHandle!,
    Reason: 'via query',
  });
  assert.equal(res.status, 200, await res.clone().text());
  const xml = await (await query({ Action: 'PeekMessages', QueueUrl: dlq })).text();
  assert.match(xml, /<reason>rejected<\/reason>/);
  assert.match(xml, /<rejectReason>via query<\/rejectReason>/);
});

describe('delivery_limit', () => {
  test('a message received more than maxReceiveCount times dies with reason delivery_limit', async () => {
    const dlq = await create(sqs, 'lim-dlq');
    const src = await create(sqs, 'lim', { RedrivePolicy: redrivePolicy('lim-dlq', 2) });
    await send(src, 'flaky');
    for (let i = 0; i < 3; i++) await receive(sqs, src, { VisibilityTimeout: 0 });
    const dead = await receiveWithHistory(sqs, dlq);
    assert.deepEqual(entries(dead), [['lim', 'delivery_limit', 1]]);
  });
});

describe('history across several queues', () => {
  test('deaths compress by {queue, reason}, newest first, with first- and last-death summaries', async () => {
    const a = await create(sqs, 'ring-a', { RedriveMessageTtlSeconds: '1' });
    const b = await create(sqs, 'ring-b', { RedrivePolicy: redrivePolicy('ring-a') });
    await sqs.send(
      new SetQueueAttributesCommand({ QueueUrl: a, Attributes: { RedrivePolicy: redrivePolicy('ring-b') } }),
    );
    await send(a, 'wanderer');
    // 1: expired in ring-a. Then rejected in ring-b, ring-a, ring-b, ring-a, in turn.
    await advanceUntilDepth(server, b, 1);
    const hops: [string, string][] = [
      [b, 'b1'],
      [a, 'a1'],
      [b, 'b2'],
      [a, 'a2'],
    ];
    for (const [url, why] of hops) {
      const m = await receiveWithHistory(sqs, url);
      assert.equal((await reject(server, url, m.ReceiptHandle!, why)).status, 200);
    }
    const m = await receiveWithHistory(sqs, b);
    assert.deepEqual(entries(m), [
      ['ring-a', 'rejected', 2],
      ['ring-b', 'rejected', 2],
      ['ring-a', 'expired', 1],
    ]);
    const h = history(m);
    assert.equal(h[0]!.rejectReason, 'a2', 'the latest reason text');
    assert.ok(h[0]!.firstTime <= h[0]!.lastTime);
    assert.equal(attr(m, 'RedriveFirstDeathQueue'), 'ring-a');
    assert.equal(attr(m, 'RedriveFirstDeathReason'), 'expired');
    assert.equal(attr(m, 'RedriveLastDeathQueue'), 'ring-a');
    assert.equal(attr(m, 'RedriveLastDeathReason'), 'rejected');
    const [peeked] = await peek(server, b);
    assert.equal(peeked!.FirstDeath.reason, 'expired');
    assert.equal(peeked!.DeathHistory.length, 3);
  });
});

describe('expired', () => {
  test('a queue TTL dead-letters on the clock; the TTL is removed, so it does not expire again', async () => {
    const dlq = await create(sqs, 'ttl-dlq');
    const src = await create(sqs, 'ttl', { RedrivePolicy: redrivePolicy('ttl-dlq'), RedriveMessageTtlSeconds: '5' });
    await send(src, 'perishable');
    await server.advanceClock(4_000);
    assert.equal((await peek(server, dlq)).length, 0, 'not yet');
    const [dead] = await advanceUntilDepth(server, dlq, 1);
    assert.equal(dead!.ExpiresTimestamp, undefined, 'no TTL in the dead-letter queue');
    assert.deepEqual(
      dead!.DeathHistory.map((d: any) => [d.queue, d.reason, d.count]),
      [['ttl', 'expired', 1]],
    );
    await server.advanceClock(60_000);
    assert.equal((await peek(server, dlq)).length, 1, 'still there');
    assert.equal((await peek(server, src)).length, 0);
  });

  test('a message TTL (system attribute RedriveTtlSeconds) is kept in the history as originalTtlSeconds', async () => {
    const dlq = await create(sqs, 'mttl-dlq');
    const src = await create(sqs, 'mttl', {
      RedrivePolicy: redrivePolicy('mttl-dlq'),
      RedriveMessageTtlSeconds: '100',
    });
    await send(src, 'short', {
      MessageSystemAttributes: { RedriveTtlSeconds: { DataType: 'Number', StringValue: '2' } },
    });
    await send(src, 'long');
    const [dead] = await advanceUntilDepth(server, dlq, 1, 10);
    assert.equal(dead!.Body, 'short', 'the lower of the queue and message TTLs applies');
    assert.equal(dead!.DeathHistory[0].originalTtlSeconds, 2);
    await assertSqsError(
      send(src, 'bad', { MessageSystemAttributes: { RedriveTtlSeconds: { DataType: 'Number', StringValue: '-1' } } }),
      {
        name: 'InvalidParameterValue',
        status: 400,
        message: /RedriveTtlSeconds/,
      },
    );
  });

  test("an expired message arriving in a queue with a TTL gets that queue's TTL, not its old one", async () => {
    await create(sqs, 'chain-c');
    await create(sqs, 'chain-b', { RedrivePolicy: redrivePolicy('chain-c'), RedriveMessageTtlSeconds: '10' });
    const a = await create(sqs, 'chain-a', { RedrivePolicy: redrivePolicy('chain-b'), RedriveMessageTtlSeconds: '1' });
    await send(a, 'hop');
    const [inB] = await advanceUntilDepth(server, `${server.url}/000000000000/chain-b`, 1);
    assert.ok(inB!.ExpiresTimestamp > inB!.DeadLetteredTimestamp, 'a fresh expiry from arrival');
    assert.equal(inB!.ExpiresTimestamp, inB!.DeadLetteredTimestamp + 10_000);
    const [inC] = await advanceUntilDepth(server, `${server.url}/000000000000/chain-c`, 1);
    assert.deepEqual(
      inC!.DeathHistory.map((d: any) => [d.queue, d.reason]),
      [
        ['chain-b', 'expired'],
        ['chain-a', 'expired'],
      ],
    );
  });

  test('deleting a whole queue dead-letters nothing', async () => {
    const dlq = await create(sqs, 'whole-dlq');
    const src = await create(sqs, 'whole', {
      RedrivePolicy: redrivePolicy('whole-dlq'),
      RedriveMessageTtlSeconds: '1',
    });
    await send(src, 'a');
    await sqs.send(new DeleteQueueCommand({ QueueUrl: src }));
    await server.advanceClock(5_000);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal((await peek(server, dlq)).length, 0);
  });
});

describe('maxlen', () => {
  test('drop-head dead-letters the oldest message in the same step as the send', async () => {
    const dlq = await create(sqs, 'len-dlq');
    const src = await create(sqs, 'len', { RedrivePolicy: redrivePolicy('len-dlq'), RedriveMaxLength: '2' });
    for (const b of ['m1', 'm2', 'm3']) await send(src, b);
    assert.deepEqual(
      (await peek(server, src)).map((m) => m.Body),
      ['m2', 'm3'],
    );
    const [dead] = await peek(server, dlq);
    assert.equal(dead!.Body, 'm1');
    assert.equal(dead!.DeathHistory[0].reason, 'maxlen');
  });

  test('reject-publish fails the send with OverLimit; a batch fails only the entries that do not fit', async () => {
    const src = await create(sqs, 'full', { RedriveMaxLengthBytes: '10', RedriveOverflow: 'reject-publish' });
    await send(src, '12345');
    await assertSqsError(send(src, '123456'), { name: 'OverLimit', status: 403, message: /full/ });
    const out = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: src,
        Entries: [
          { Id: 'a', MessageBody: '123' },
          { Id: 'b', MessageBody: '1234' },
          { Id: 'c', MessageBody: '12' },
        ],
      }),
    );
    assert.deepEqual(
      out.Successful?.map((s) => s.Id),
      ['a', 'c'],
    );
    assert.deepEqual(
      out.Failed?.map((f) => [f.Id, f.Code, f.SenderFault]),
      [['b', 'OverLimit', true]],
    );
  });
});

describe('cycles', () => {
  test('a cycle with no rejection is broken: the message is parked in redrive-cycles, counted and logged', async () => {
    const a = await create(sqs, 'cyc-a', { RedriveMessageTtlSeconds: '1' });
    const b = await create(sqs, 'cyc-b', { RedriveMessageTtlSeconds: '1', RedrivePolicy: redrivePolicy('cyc-a') });
    await sqs.send(
      new SetQueueAttributesCommand({ QueueUrl: a, Attributes: { RedrivePolicy: redrivePolicy('cyc-b') } }),
    );
    await send(a, 'round and round');
    // Expired in cyc-a into cyc-b, then in cyc-b, where going back to cyc-a closes the cycle.
    const cycles = `${server.url}/000000000000/redrive-cycles`;
    const [parked] = await advanceUntilDepth(server, cycles, 1);
    assert.deepEqual(
      parked!.DeathHistory.map((d: any) => [d.queue, d.reason, d.count]),
      [
        ['cyc-b', 'expired', 1],
        ['cyc-a', 'expired', 1],
      ],
    );
    assert.equal(parked!.Attributes.DeadLetterQueueSourceArn, arn('cyc-b'));
    assert.equal((await peek(server, a)).length + (await peek(server, b)).length, 0);
    await server.advanceClock(60_000);
    assert.equal((await peek(server, cycles)).length, 1, 'it stays parked');
    await waitFor(
      async () => server.output(),
      (o) => o.includes('dead-letter cycle'),
      'the log line',
    );
  });

  test('a rejection in the cycle lets the message go round', async () => {
    const a = await create(sqs, 'cycr-a');
    await create(sqs, 'cycr-b', { RedriveMessageTtlSeconds: '1', RedrivePolicy: redrivePolicy('cycr-a') });
    await sqs.send(
      new SetQueueAttributesCommand({ QueueUrl: a, Attributes: { RedrivePolicy: redrivePolicy('cycr-b') } }),
    );
    await send(a, 'again');
    const [m] = await receive(sqs, a);
    await reject(server, a, m!.ReceiptHandle!);
    const [back] = await advanceUntilDepth(server, a, 1);
    assert.deepEqual(
      back!.DeathHistory.map((d: any) => [d.queue, d.reason]),
      [
        ['cycr-b', 'expired'],
        ['cycr-a', 'rejected'],
      ],
    );
  });
});

describe('redrive', () => {
  test('a redriven message keeps its history, and dying again adds to it', async () => {
    const dlq = await create(sqs, 'again-dlq');
    const src = await create(sqs, 'again', { RedrivePolicy: redrivePolicy('again-dlq') });
    await send(src, 'phoenix');
    for (let i = 0; i < 2; i++) {
      const [m] = await receive(sqs, src);
      await reject(server, src, m!.ReceiptHandle!, `try ${i}`);
      await sqs.send(new StartMessageMoveTaskCommand({ SourceArn: arn('again-dlq') }));
      assert.equal((await runToEnd(server, sqs, arn('again-dlq'))).Status, 'COMPLETED');
    }
    const back = await receiveWithHistory(sqs, src);
    assert.deepEqual(entries(back), [['again', 'rejected', 2]]);
    assert.equal(history(back)[0]!.rejectReason, 'try 1');
    assert.equal((await peek(server, dlq)).length, 0);
  });
});

/**
 * The console's API extensions over the wire, without an SDK: ListQueueSummaries,
 * DeleteMessagesById, PeekMessages' Filter, GetDeadLetterBreakdown and GetQueueActivity,
 * each in the JSON protocol and in the Query protocol, with their errors.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { SendMessageBatchCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { useServerProcess, type ServerProcess } from '../support/server-process.js';
import { arn, create, redrivePolicy, reject } from './death-helpers.js';
import { rawJson, receive, SDK_HEADER } from './helpers.js';

const config = join(mkdtempSync(join(tmpdir(), 'redrive-ext-')), 'redrive.json');
writeFileSync(
  config,
  JSON.stringify({
    policies: [{ name: 'pol', pattern: '^pol-', definition: { deadLetterTargetName: 'sum-dlq', maxReceiveCount: 3 } }],
  }),
);

let server: ServerProcess;
let sqs: SQSClient;
useServerProcess({ storage: 'memory', manualClock: true, args: ['--config', config] }, (s) => {
  server = s;
  sqs = s.client();
});

async function call(action: string, input: Record<string, unknown>) {
  return rawJson(server.url, `AmazonSQS.${action}`, JSON.stringify(input)) as Promise<{
    status: number;
    text: string;
    json: Record<string, any>;
  }>;
}

async function query(params: Record<string, string>) {
  const res = await fetch(server.url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...SDK_HEADER },
    body: new URLSearchParams({ Version: '2012-11-05', ...params }).toString(),
  });
  return { status: res.status, code: res.headers.get('x-amzn-query-error'), xml: await res.text() };
}

const send = (QueueUrl: string, MessageBody: string, extra: Record<string, unknown> = {}) =>
  sqs.send(new SendMessageCommand({ QueueUrl, MessageBody, ...extra }));

/** Receives until every visible message of `src` (maxReceiveCount 1) has been dead-lettered. */
async function deadLetterAll(src: string): Promise<void> {
  await receive(sqs, src, { VisibilityTimeout: 0, MaxNumberOfMessages: 10 });
  while ((await receive(sqs, src, { VisibilityTimeout: 0, MaxNumberOfMessages: 10 })).length > 0);
}

function assertError(r: { status: number; json: Record<string, any> }, status: number, type: string, message?: RegExp) {
  assert.equal(r.status, status, JSON.stringify(r.json));
  assert.equal(String(r.json.__type).split('#').pop(), type);
  if (message) assert.match(String(r.json.message), message);
}

describe('ListQueueSummaries', () => {
  test('counts, age, the policy in force and where it comes from, and the sources of each DLQ, in one request', async () => {
    const dlq = await create(sqs, 'sum-dlq');
    const src = await create(sqs, 'sum-src', { RedrivePolicy: redrivePolicy('sum-dlq', 2) });
    const pol = await create(sqs, 'pol-a');
    await create(sqs, 'sum-f.fifo', { FifoQueue: 'true' });
    await send(src, 'a');
    await send(src, 'b');
    await send(src, 'c');
    await send(src, 'later', { DelaySeconds: 600 });
    await receive(sqs, src, { MaxNumberOfMessages: 1, VisibilityTimeout: 300 });
    await server.advanceClock(12_000);

    const r = await call('ListQueueSummaries', {});
    assert.equal(r.status, 200, r.text);
    const byName = new Map((r.json.Queues as Record<string, any>[]).map((q) => [q.QueueName, q]));
    const s = byName.get('sum-src')!;
    assert.deepEqual(
      [
        s.QueueUrl,
        s.QueueArn,
        s.FifoQueue,
        s.ApproximateNumberOfMessages,
        s.ApproximateNumberOfMessagesNotVisible,
        s.ApproximateNumberOfMessagesDelayed,
      ],
      [src, arn('sum-src'), false, 2, 1, 1],
    );
    assert.ok(
      s.ApproximateAgeOfOldestMessage >= 12 && s.ApproximateAgeOfOldestMessage < 60,
      String(s.ApproximateAgeOfOldestMessage),
    );
    assert.deepEqual(JSON.parse(s.RedrivePolicy), { deadLetterTargetArn: arn('sum-dlq'), maxReceiveCount: 2 });
    assert.equal(s.RedrivePolicySource, 'queue');
    const p = byName.get('pol-a')!;
    assert.deepEqual(JSON.parse(p.RedrivePolicy), { deadLetterTargetArn: arn('sum-dlq'), maxReceiveCount: 3 });
    assert.equal(p.RedrivePolicySource, 'policy:pol');
    const d = byName.get('sum-dlq')!;
    assert.deepEqual(d.DeadLetterSourceQueueUrls, [pol, src], 'both sources, in name order');
    assert.equal(d.RedrivePolicy, undefined);
    assert.equal(d.ApproximateAgeOfOldestMessage, undefined, 'an empty queue has no oldest message');
    assert.equal(byName.get('sum-f.fifo')!.FifoQueue, true);
    assert.equal(d.QueueUrl, dlq);
  });

  test('prefix, pages and errors', async () => {
    for (const n of ['pg-1', 'pg-2', 'pg-3']) await create(sqs, n);
    const first = await call('ListQueueSummaries', { QueueNamePrefix: 'pg-', MaxResults: 2 });
    assert.deepEqual(
      first.json.Queues.map((q: any) => q.QueueName),
      ['pg-1', 'pg-2'],
    );
    const second = await call('ListQueueSummaries', {
      QueueNamePrefix: 'pg-',
      MaxResults: 2,
      NextToken: first.json.NextToken,
    });
    assert.deepEqual(
      second.json.Queues.map((q: any) => q.QueueName),
      ['pg-3'],
    );
    assert.equal(second.json.NextToken, undefined);
    assertError(
      await call('ListQueueSummaries', { MaxResults: 0 }),
      400,
      'InvalidParameterValueException',
      /MaxResults/,
    );
    assertError(
      await call('ListQueueSummaries', { MaxResults: 1001 }),
      400,
      'InvalidParameterValueException',
      /MaxResults/,
    );
    assertError(
      await call('ListQueueSummaries', { NextToken: 'garbage!' }),
      400,
      'InvalidParameterValueException',
      /NextToken/,
    );
    const q = await query({ Action: 'ListQueueSummaries', QueueNamePrefix: 'sum-' });
    assert.equal(q.status, 200, q.xml);
    assert.match(
      q.xml,
      /<ListQueueSummariesResult><Queue><QueueUrl>[^<]+\/sum-dlq<\/QueueUrl><QueueName>sum-dlq<\/QueueName>/,
    );
    assert.match(q.xml, /<DeadLetterSourceQueueUrl>[^<]+\/sum-src<\/DeadLetterSourceQueueUrl>/);
    assert.match(q.xml, /<FifoQueue>false<\/FifoQueue>/);
  });
});

describe('DeleteMessagesById', () => {
  test('deletes visible and in-flight messages by id; an unknown id fails alone', async () => {
    const dlq = await create(sqs, 'del-dlq');
    const src = await create(sqs, 'del-src', { RedrivePolicy: redrivePolicy('del-dlq', 1) });
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: src,
        Entries: ['a', 'b', 'c', 'd'].map((b) => ({ Id: b, MessageBody: b })),
      }),
    );
    await deadLetterAll(src);
    const peeked = (await call('PeekMessages', { QueueUrl: dlq, MaxResults: 10 })).json.Messages as {
      MessageId: string;
      Body: string;
    }[];
    const [held] = await receive(sqs, dlq, { MaxNumberOfMessages: 1, VisibilityTimeout: 300 });
    const visible = peeked.find((m) => m.MessageId !== held!.MessageId)!.MessageId;
    const r = await call('DeleteMessagesById', {
      QueueUrl: dlq,
      MessageIds: [visible, held!.MessageId!, 'no-such-message'],
    });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json.Successful, [{ Id: visible }, { Id: held!.MessageId }]);
    assert.deepEqual(r.json.Failed, [
      {
        Id: 'no-such-message',
        Code: 'MessageNotFound',
        Message: 'No message with id no-such-message is in del-dlq.',
        SenderFault: true,
      },
    ]);
    const left = ((await call('PeekMessages', { QueueUrl: dlq })).json.Messages as { MessageId: string }[]).map(
      (m) => m.MessageId,
    );
    assert.deepEqual(
      left,
      peeked.map((m) => m.MessageId).filter((m) => m !== visible && m !== held!.MessageId),
      'both are gone, the one in flight too',
    );

    const q = await query({
      Action: 'DeleteMessagesById',
      QueueUrl: dlq,
      'MessageId.1': left[0]!,
      'MessageId.2': 'gone',
    });
    assert.equal(q.status, 200, q.xml);
    assert.match(
      q.xml,
      new RegExp(`<DeleteMessageBatchResultEntry><Id>${left[0]}</Id></DeleteMessageBatchResultEntry>`),
    );
    assert.match(
      q.xml,
      /<BatchResultErrorEntry><Id>gone<\/Id><SenderFault>true<\/SenderFault><Code>MessageNotFound<\/Code>/,
    );
  });

  test('checks the list as SQS checks a batch', async () => {
    const q = await create(sqs, 'del-errors');
    assertError(await call('DeleteMessagesById', { QueueUrl: q, MessageIds: [] }), 400, 'EmptyBatchRequest');
    assertError(
      await call('DeleteMessagesById', { QueueUrl: q, MessageIds: Array.from({ length: 11 }, (_, i) => `m${i}`) }),
      400,
      'TooManyEntriesInBatchRequest',
      /11/,
    );
    assertError(
      await call('DeleteMessagesById', { QueueUrl: q, MessageIds: ['x', 'x'] }),
      400,
      'BatchEntryIdsNotDistinct',
      /x repeated/,
    );
    assertError(
      await call('DeleteMessagesById', { QueueUrl: q, MessageIds: ['not/valid'] }),
      400,
      'InvalidBatchEntryId',
    );
    assertError(
      await call('DeleteMessagesById', { QueueUrl: q }),
      400,
      'MissingRequiredParameterException',
      /MessageIds/,
    );
    assertError(
      await call('DeleteMessagesById', { QueueUrl: `${q}-nope`, MessageIds: ['x'] }),
      400,
      'QueueDoesNotExist',
    );
    const empty = await query({ Action: 'DeleteMessagesById', QueueUrl: q });
    assert.equal(empty.code, 'MissingParameter;Sender');
  });
});

describe('PeekMessages with a Filter', () => {
  test('death reason, source, body text and attribute, applied by the server', async () => {
    const dlq = await create(sqs, 'flt-dlq');
    const a = await create(sqs, 'flt-a', { RedrivePolicy: redrivePolicy('flt-dlq', 1) });
    const b = await create(sqs, 'flt-b', { RedrivePolicy: redrivePolicy('flt-dlq', 1) });
    await send(a, '{"type":"refund","n":1}', {
      MessageAttributes: { tenant: { DataType: 'String', StringValue: 'acme' } },
    });
    await send(a, '{"type":"order","n":2}');
    await deadLetterAll(a);
    await send(b, 'rejected one');
    const [m] = await receive(sqs, b, { VisibilityTimeout: 60 });
    assert.equal((await reject(server, b, m!.ReceiptHandle!, 'bad schema')).status, 200);
    const bodies = async (Filter: Record<string, unknown>) => {
      const r = await call('PeekMessages', { QueueUrl: dlq, MaxResults: 10, Filter });
      assert.equal(r.status, 200, r.text);
      return (r.json.Messages as { Body: string }[]).map((x) => x.Body);
    };
    assert.deepEqual(await bodies({ DeathReason: 'rejected' }), ['rejected one']);
    assert.deepEqual(await bodies({ DeathReason: 'delivery_limit' }), [
      '{"type":"refund","n":1}',
      '{"type":"order","n":2}',
    ]);
    assert.deepEqual(await bodies({ DeadLetterQueueSourceArn: arn('flt-b') }), ['rejected one']);
    assert.deepEqual(await bodies({ BodyContains: 'order' }), ['{"type":"order","n":2}']);
    assert.deepEqual(await bodies({ BodyJsonPath: '$.type', Equals: 'refund' }), ['{"type":"refund","n":1}']);
    assert.deepEqual(await bodies({ MessageAttribute: { Name: 'tenant', Value: 'acme' } }), [
      '{"type":"refund","n":1}',
    ]);
    assert.deepEqual(await bodies({ DeathReason: 'expired' }), []);
    assertError(
      await call('PeekMessages', { QueueUrl: dlq, Filter: { DeathReason: 'tired' } }),
      400,
      'InvalidParameterValueException',
      /DeathReason must be one of/,
    );
    assertError(
      await call('PeekMessages', { QueueUrl: dlq, Filter: { Colour: 'red' } }),
      400,
      'InvalidParameterValueException',
      /Unknown field Colour/,
    );

    const q = await query({
      Action: 'PeekMessages',
      QueueUrl: dlq,
      'Filter.DeathReason': 'rejected',
      'Filter.BodyContains': 'one',
    });
    assert.equal(q.status, 200, q.xml);
    assert.equal(q.xml.match(/<Message>/g)?.length, 1);
    assert.match(q.xml, /<Body>rejected one<\/Body>/);
    const attr = await query({
      Action: 'PeekMessages',
      QueueUrl: dlq,
      'Filter.MessageAttribute.Name': 'tenant',
      'Filter.MessageAttribute.Value': 'acme',
    });
    assert.equal(attr.xml.match(/<Message>/g)?.length, 1);
  });

  test('a search examines at most 1,000 messages a request and resumes where it stopped', async () => {
    const q = await create(sqs, 'flt-big');
    for (let i = 0; i < 130; i++) {
      await sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: q,
          Entries: Array.from({ length: 10 }, (_, j) => ({
            Id: `m${j}`,
            MessageBody: i * 10 + j === 1_250 ? 'needle' : `hay ${i * 10 + j}`,
          })),
        }),
      );
    }
    const first = await call('PeekMessages', { QueueUrl: q, MaxResults: 10, Filter: { BodyContains: 'needle' } });
    assert.deepEqual(first.json.Messages, [], 'nothing in the first 1,000');
    assert.ok(first.json.NextToken, 'but a token to go on');
    const second = await call('PeekMessages', {
      QueueUrl: q,
      MaxResults: 10,
      Filter: { BodyContains: 'needle' },
      NextToken: first.json.NextToken,
    });
    assert.deepEqual(
      second.json.Messages.map((m: any) => m.Body),
      ['needle'],
    );
    assert.equal(second.json.NextToken, undefined, 'the end of the queue');
    const page = await call('PeekMessages', { QueueUrl: q, MaxResults: 3, Filter: { BodyContains: 'hay 12' } });
    assert.deepEqual(
      page.json.Messages.map((m: any) => m.Body),
      ['hay 12', 'hay 120', 'hay 121'],
    );
    const next = await call('PeekMessages', {
      QueueUrl: q,
      MaxResults: 3,
      Filter: { BodyContains: 'hay 12' },
      NextToken: page.json.NextToken,
    });
    assert.deepEqual(
      next.json.Messages.map((m: any) => m.Body),
      ['hay 122', 'hay 123', 'hay 124'],
      'a full page resumes right after its last message',
    );
  });
});

describe('GetDeadLetterBreakdown', () => {
  test('by source and by reason, with counts and first and last dead-letter times', async () => {
    const dlq = await create(sqs, 'brk-dlq');
    const a = await create(sqs, 'brk-a', { RedrivePolicy: redrivePolicy('brk-dlq', 1) });
    const b = await create(sqs, 'brk-b', { RedrivePolicy: redrivePolicy('brk-dlq', 1) });
    const t0 = await server.advanceClock(0);
    await send(a, 'a1');
    await send(a, 'a2');
    await deadLetterAll(a);
    const t1 = await server.advanceClock(5_000);
    await send(b, 'b1');
    const [m] = await receive(sqs, b, { VisibilityTimeout: 60 });
    await reject(server, b, m!.ReceiptHandle!);
    await send(dlq, 'sent straight here');
    const r = await call('GetDeadLetterBreakdown', { QueueUrl: dlq });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json.BySource, [
      { SourceArn: arn('brk-a'), Count: 2, OldestTimestamp: t0, NewestTimestamp: t0 },
      { SourceArn: arn('brk-b'), Count: 1, OldestTimestamp: t1, NewestTimestamp: t1 },
    ]);
    assert.deepEqual(r.json.ByReason, [
      { Reason: 'delivery_limit', Count: 2, OldestTimestamp: t0, NewestTimestamp: t0 },
      { Reason: 'rejected', Count: 1, OldestTimestamp: t1, NewestTimestamp: t1 },
    ]);
    const q = await query({ Action: 'GetDeadLetterBreakdown', QueueUrl: dlq });
    assert.match(
      q.xml,
      new RegExp(
        `<BySource><SourceArn>${arn('brk-a')}</SourceArn><Count>2</Count><OldestTimestamp>${t0}</OldestTimestamp>`,
      ),
    );
    assert.match(q.xml, /<ByReason><Reason>rejected<\/Reason><Count>1<\/Count>/);
    assertError(await call('GetDeadLetterBreakdown', { QueueUrl: `${dlq}-nope` }), 400, 'QueueDoesNotExist');
  });
});

describe('GetQueueActivity', () => {
  test('the last hour per minute: what was sent, received, deleted and dead-lettered, and the depth', async () => {
    await create(sqs, 'act-dlq');
    const q = await create(sqs, 'act', { RedrivePolicy: redrivePolicy('act-dlq', 1) });
    const now = await server.advanceClock(0);
    for (const body of ['a', 'b', 'c', 'd']) await send(q, body);
    const got = await receive(sqs, q, { MaxNumberOfMessages: 2, VisibilityTimeout: 0 });
    await sqs.send(
      new (await import('@aws-sdk/client-sqs')).DeleteMessageCommand({
        QueueUrl: q,
        ReceiptHandle: got[0]!.ReceiptHandle!,
      }),
    );
    // The other received message is received again (a second receive) and dead-lettered.
    while ((await receive(sqs, q, { MaxNumberOfMessages: 10, VisibilityTimeout: 300 })).length > 0);
    const r = await call('GetQueueActivity', { QueueUrl: q });
    assert.equal(r.status, 200, r.text);
    const minutes = r.json.Minutes as {
      Timestamp: number;
      Sent: number;
      Received: number;
      Deleted: number;
      DeadLettered: number;
      Depth: number;
    }[];
    assert.equal(minutes.length, 60);
    const last = now - (now % 60_000);
    assert.equal(minutes[59]!.Timestamp, last);
    minutes.forEach((m, i) => assert.equal(m.Timestamp, last - (59 - i) * 60_000));
    const sum = (k: 'Sent' | 'Received' | 'Deleted' | 'DeadLettered') => minutes.reduce((n, m) => n + m[k], 0);
    assert.deepEqual(
      [sum('Sent'), sum('Received'), sum('Deleted'), sum('DeadLettered')],
      [4, 4, 1, 1],
      'received: 2, then the 2 never received',
    );
    assert.equal(minutes[59]!.Depth, 2, 'the live depth: two messages in flight');
    const x = await query({ Action: 'GetQueueActivity', QueueUrl: q });
    assert.equal(x.xml.match(/<Minute>/g)?.length, 60);
    assert.match(x.xml, new RegExp(`<Minute><Timestamp>${last}</Timestamp><Sent>4</Sent>`));
    assertError(await call('GetQueueActivity', {}), 400, 'MissingRequiredParameterException');
  });
});

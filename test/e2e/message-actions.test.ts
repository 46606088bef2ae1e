/**
 * The operator's message actions and triage over the wire: ChangeMessageVisibilityById and
 * MoveMessagesById as raw JSON and Query calls, checked with the AWS SDK; the same actions
 * and the counts from the CLI (`redrive messages visible|move`, `peek --count`, `dlq why`).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DeleteMessageCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { useServerProcess, type ServerProcess } from '../support/server-process.js';
import { cliAt } from '../cli/support.js';
import { arn, create, redrivePolicy, reject } from './death-helpers.js';
import { counts, rawJson, receive, SDK_HEADER } from './helpers.js';

let server: ServerProcess;
let sqs: SQSClient;
useServerProcess({ storage: 'memory', manualClock: true }, (s) => {
  server = s;
  sqs = s.client();
});

const call = (action: string, input: Record<string, unknown>) =>
  rawJson(server.url, `AmazonSQS.${action}`, JSON.stringify(input)) as Promise<{
    status: number;
    text: string;
    json: Record<string, any>;
  }>;

/** A source `name` (maxReceiveCount 1 into `name-dlq`) and its DLQ holding `bodies`, rejected with reason `why <body>`. */
async function withDeadLetters(name: string, bodies: string[]) {
  const dlq = await create(sqs, `${name}-dlq`);
  const source = await create(sqs, name, { RedrivePolicy: redrivePolicy(`${name}-dlq`, 1) });
  for (const body of bodies) {
    await sqs.send(new SendMessageCommand({ QueueUrl: source, MessageBody: body }));
    const [m] = await receive(sqs, source);
    assert.equal((await reject(server, source, m!.ReceiptHandle!, `why ${body}`)).status, 200);
  }
  const peeked = (await call('PeekMessages', { QueueUrl: dlq, MaxResults: 100 })).json.Messages as {
    MessageId: string;
    Body: string;
  }[];
  return { source, dlq, ids: peeked.map((m) => m.MessageId) };
}

describe('ChangeMessageVisibilityById', () => {
  test('makes a held message visible now and changes a visibility, as the SDK then sees it', async () => {
    const q = await create(sqs, 'vis');
    const { MessageId } = await sqs.send(new SendMessageCommand({ QueueUrl: q, MessageBody: 'stuck' }));
    const [held] = await receive(sqs, q, { VisibilityTimeout: 3600 });
    assert.deepEqual(await counts(sqs, q), { visible: 0, inflight: 1, delayed: 0 });
    const r = await call('ChangeMessageVisibilityById', { QueueUrl: q, MessageId, VisibilityTimeout: 0 });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(await counts(sqs, q), { visible: 1, inflight: 0, delayed: 0 });
    const [again] = await receive(sqs, q, {
      VisibilityTimeout: 30,
      AttributeNames: ['ApproximateReceiveCount' as never],
    });
    assert.equal(again!.MessageId, MessageId);
    assert.equal(again!.Attributes?.ApproximateReceiveCount, '2');
    // Query protocol: the same action, made visible after 600 s.
    const res = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...SDK_HEADER },
      body: new URLSearchParams({
        Action: 'ChangeMessageVisibilityById',
        Version: '2012-11-05',
        QueueUrl: q,
        MessageId: MessageId!,
        VisibilityTimeout: '600',
      }).toString(),
    });
    assert.equal(res.status, 200, await res.text());
    await server.advanceClock(599_000);
    assert.deepEqual(await receive(sqs, q), [], 'hidden until 600 s from the change');
    await server.advanceClock(2_000);
    assert.equal((await receive(sqs, q))[0]?.MessageId, MessageId);
    // A standard queue still takes an old receipt, as after an expired visibility.
    await sqs.send(new DeleteMessageCommand({ QueueUrl: q, ReceiptHandle: held!.ReceiptHandle }));
    assert.deepEqual(await counts(sqs, q), { visible: 0, inflight: 0, delayed: 0 });
    const gone = await call('ChangeMessageVisibilityById', { QueueUrl: q, MessageId, VisibilityTimeout: 0 });
    assert.equal(gone.status, 400);
    assert.equal(String(gone.json.__type).split('#').pop(), 'MessageNotInflight');
  });
});

describe('MoveMessagesById', () => {
  test('redrives a message to its source and a selection to a chosen queue, each in exactly one queue', async () => {
    const { source, dlq, ids } = await withDeadLetters('mv', ['a', 'b', 'c']);
    const other = await create(sqs, 'mv-other');
    const one = await call('MoveMessagesById', { QueueUrl: dlq, MessageIds: [ids[0]] });
    assert.equal(one.status, 200, one.text);
    assert.equal(one.json.Successful[0].DestinationArn, arn('mv'));
    const [back] = await receive(sqs, source, { MessageAttributeNames: ['All'], AttributeNames: ['All'] });
    assert.equal(back!.Body, 'a');
    assert.equal(back!.MessageId, one.json.Successful[0].MessageId);
    const two = await call('MoveMessagesById', {
      QueueUrl: dlq,
      MessageIds: [ids[1], ids[2], 'nope'],
      DestinationArn: arn('mv-other'),
    });
    assert.deepEqual(
      two.json.Successful.map((s: { Id: string }) => s.Id),
      [ids[1], ids[2]],
    );
    assert.deepEqual(two.json.Failed, [
      { Id: 'nope', Code: 'MessageNotFound', Message: 'No message with id nope is in mv-dlq.', SenderFault: true },
    ]);
    assert.deepEqual((await receive(sqs, other, { MaxNumberOfMessages: 10 })).map((m) => m.Body).sort(), ['b', 'c']);
    assert.deepEqual(await counts(sqs, dlq), { visible: 0, inflight: 0, delayed: 0 });
    const bad = await call('MoveMessagesById', { QueueUrl: dlq, MessageIds: [ids[0]], DestinationArn: arn('no-such') });
    assert.equal(bad.status, 404, bad.text);
    // Counted as a redrive (docs/monitoring.md): received and deleted on the DLQ, sent where each went.
    const total = async (url: string, k: string) =>
      ((await call('GetQueueActivity', { QueueUrl: url })).json.Minutes as Record<string, number>[]).reduce(
        (n, m) => n + m[k]!,
        0,
      );
    assert.deepEqual([await total(dlq, 'Received'), await total(dlq, 'Deleted')], [3, 3], 'the DLQ counts three moves');
    assert.equal(await total(other, 'Sent'), 2, 'mv-other counts its two');
  });

  test('in the Query protocol, with PeekMessages CountOnly and the rejection reasons', async () => {
    const { dlq, ids } = await withDeadLetters('qmv', ['q1', 'q2']);
    const query = async (params: Record<string, string>) => {
      const res = await fetch(server.url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...SDK_HEADER },
        body: new URLSearchParams({ Version: '2012-11-05', QueueUrl: dlq, ...params }).toString(),
      });
      return { status: res.status, xml: await res.text() };
    };
    const count = await query({ Action: 'PeekMessages', CountOnly: 'true', 'Filter.BodyContains': 'q2' });
    assert.match(count.xml, /<Count>1<\/Count>/);
    assert.match(count.xml, /<Examined>2<\/Examined>/);
    const why = await query({ Action: 'GetDeadLetterBreakdown' });
    assert.match(why.xml, /<ByRejectionReason><Reason>why q1<\/Reason><Count>1<\/Count><\/ByRejectionReason>/);
    assert.match(why.xml, /<RejectionReasonsComplete>true<\/RejectionReasonsComplete>/);
    const moved = await query({ Action: 'MoveMessagesById', 'MessageId.1': ids[0]!, 'MessageId.2': 'gone' });
    assert.equal(moved.status, 200, moved.xml);
    assert.match(
      moved.xml,
      new RegExp(
        `<MovedMessage><Id>${ids[0]}</Id><MessageId>[0-9a-f-]{36}</MessageId><DestinationArn>${arn('qmv')}</DestinationArn></MovedMessage>`,
      ),
    );
    assert.match(
      moved.xml,
      /<BatchResultErrorEntry><Id>gone<\/Id><SenderFault>true<\/SenderFault><Code>MessageNotFound<\/Code>/,
    );
  });
});

describe('the CLI', () => {
  test('messages visible, messages move, peek --count and dlq why', async () => {
    const cli = cliAt(server.url);
    const { dlq, ids } = await withDeadLetters('cli', ['x', 'y', 'y']);
    await create(sqs, 'cli-replay');
    const q = await create(sqs, 'cli-held');
    const { MessageId } = await sqs.send(new SendMessageCommand({ QueueUrl: q, MessageBody: 'held' }));
    await receive(sqs, q, { VisibilityTimeout: 3600 });
    const vis = await cli('messages', 'visible', 'cli-held', MessageId!);
    assert.equal(vis.stdout, `message ${MessageId} is visible again in cli-held\n`, vis.stderr);
    assert.deepEqual(await counts(sqs, q), { visible: 1, inflight: 0, delayed: 0 });
    const notHeld = await cli('messages', 'visible', 'cli-held', MessageId!, '--timeout', '60');
    assert.equal(notHeld.code, 1);
    assert.match(notHeld.stderr, /not in flight/);

    const why = await cli('dlq', 'why', 'cli-dlq');
    assert.match(why.stdout, /REJECTED WITH +MESSAGES\n"why y" +2\n"why x" +1\n/);
    const count = await cli('messages', 'peek', 'cli-dlq', '--count', '--body-contains', 'y');
    assert.equal(count.stdout, '2 messages match in cli-dlq\n', count.stderr);

    const moved = await cli('messages', 'move', 'cli-dlq', ids[0]!, ids[1]!, '--to', 'cli-replay');
    assert.equal(moved.code, 0, moved.stderr);
    assert.match(
      moved.stdout,
      new RegExp(
        `^moved ${ids[0]} to cli-replay as [0-9a-f-]{36}\\nmoved ${ids[1]} to cli-replay as [0-9a-f-]{36}\\n$`,
      ),
    );
    const toSource = await cli('messages', 'move', 'cli-dlq', ids[2]!, ids[0]!, '--json');
    assert.equal(toSource.code, 1);
    const r = JSON.parse(toSource.stdout) as {
      Moved: { Id: string; DestinationArn: string }[];
      Failed: { Id: string; Code: string }[];
    };
    assert.deepEqual(
      r.Moved.map((m) => [m.Id, m.DestinationArn]),
      [[ids[2], arn('cli')]],
    );
    assert.deepEqual(
      r.Failed.map((f) => [f.Id, f.Code]),
      [[ids[0], 'MessageNotFound']],
    );
    assert.deepEqual(await counts(sqs, dlq), { visible: 0, inflight: 0, delayed: 0 });
  });
});

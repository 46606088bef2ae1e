/** RedrivePolicy and RedriveAllowPolicy: validation, enforcement, and ListDeadLetterSourceQueues. */
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  ListDeadLetterSourceQueuesCommand,
  SendMessageCommand,
  SetQueueAttributesCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { useServerProcess, type ServerProcess } from '../support/server-process.js';
import {
  assertSqsError,
  attributes,
  counts,
  createQueue,
  invalidParameterValue,
  queueDoesNotExist,
  receive,
} from './helpers.js';

let server: ServerProcess;
let sqs: SQSClient;

useServerProcess({ storage: 'memory', manualClock: true }, (s) => {
  server = s;
  sqs = s.client();
});

const arn = (name: string, account = '000000000000', region = 'us-east-1') =>
  `arn:aws:sqs:${region}:${account}:${name}`;
const policy = (target: string, maxReceiveCount: unknown = 3) =>
  JSON.stringify({ deadLetterTargetArn: target, maxReceiveCount });
const set = (QueueUrl: string, Attributes: Record<string, string>) =>
  sqs.send(new SetQueueAttributesCommand({ QueueUrl, Attributes }));
const create = (QueueName: string, Attributes?: Record<string, string>) =>
  sqs.send(new CreateQueueCommand({ QueueName, Attributes }));
const reason = (raw: string, why: string) => `Value ${raw} for parameter RedrivePolicy is invalid. Reason: ${why}`;
const allowReason = (raw: string, why: string) =>
  `Value ${raw} for parameter RedriveAllowPolicy is invalid. Reason: ${why}`;

describe('RedrivePolicy validation', () => {
  before(async () => {
    await createQueue(sqs, 'v-dlq');
    await createQueue(sqs, 'v-dlq.fifo', { FifoQueue: 'true' });
  });

  const cases: [string, string, string][] = [
    [
      'not JSON',
      '{nope',
      'Invalid value for the parameter RedrivePolicy. Reason: Redrive policy is not a valid JSON map.',
    ],
    [
      'a JSON array',
      '[]',
      'Invalid value for the parameter RedrivePolicy. Reason: Redrive policy is not a valid JSON map.',
    ],
    [
      'no maxReceiveCount',
      JSON.stringify({ deadLetterTargetArn: arn('v-dlq') }),
      reason(
        JSON.stringify({ deadLetterTargetArn: arn('v-dlq') }),
        'Redrive policy does not contain mandatory attribute: maxReceiveCount.',
      ),
    ],
    [
      'no deadLetterTargetArn',
      '{"maxReceiveCount":"42"}',
      reason('{"maxReceiveCount":"42"}', 'Redrive policy does not contain mandatory attribute: deadLetterTargetArn.'),
    ],
    [
      'an unknown field',
      JSON.stringify({ deadLetterTargetArn: arn('v-dlq'), maxReceiveCount: 3, x: 1 }),
      reason(
        JSON.stringify({ deadLetterTargetArn: arn('v-dlq'), maxReceiveCount: 3, x: 1 }),
        'Only following attributes are supported: [maxReceiveCount, deadLetterTargetArn].',
      ),
    ],
    [
      'maxReceiveCount 0',
      policy(arn('v-dlq'), 0),
      reason(
        policy(arn('v-dlq'), 0),
        'Invalid value for maxReceiveCount: 0, valid values are from 1 to 1000 both inclusive.',
      ),
    ],
    [
      'maxReceiveCount 1001',
      policy(arn('v-dlq'), 1001),
      reason(
        policy(arn('v-dlq'), 1001),
        'Invalid value for maxReceiveCount: 1001, valid values are from 1 to 1000 both inclusive.',
      ),
    ],
    [
      'maxReceiveCount "invalid"',
      policy(arn('v-dlq'), 'invalid'),
      reason(
        policy(arn('v-dlq'), 'invalid'),
        'Invalid value for maxReceiveCount: invalid, valid values are from 1 to 1000 both inclusive.',
      ),
    ],
    // Recorded from SQS, with Python's spacing kept: the raw value is echoed as sent, and
    // the ARN's form is checked before any lookup.
    [
      'an ARN that is not one',
      '{"deadLetterTargetArn": "dummy", "maxReceiveCount": 42}',
      'Value {"deadLetterTargetArn": "dummy", "maxReceiveCount": 42} for parameter RedrivePolicy is invalid. Reason: Invalid value for deadLetterTargetArn.',
    ],
    [
      'an SNS topic ARN',
      policy('arn:aws:sns:us-east-1:000000000000:topic'),
      reason(
        policy('arn:aws:sns:us-east-1:000000000000:topic'),
        'Only SQS queues are valid resources for deadLetterTargetArn.',
      ),
    ],
    [
      'another account',
      policy(arn('v-dlq', '111111111111')),
      reason(policy(arn('v-dlq', '111111111111')), 'Dead-letter target owner should be same as the source.'),
    ],
    [
      'another region',
      policy(arn('v-dlq', '000000000000', 'eu-west-1')),
      reason(policy(arn('v-dlq', '000000000000', 'eu-west-1')), 'Dead letter target does not exist.'),
    ],
    [
      'a queue that does not exist',
      policy(arn('v-missing')),
      reason(policy(arn('v-missing')), 'Dead letter target does not exist.'),
    ],
    [
      'a FIFO target for a standard queue',
      policy(arn('v-dlq.fifo')),
      reason(policy(arn('v-dlq.fifo')), 'Dead-letter queue must be same type of queue as the source..'),
    ],
  ];
  for (const [what, raw, message] of cases) {
    test(`CreateQueue rejects ${what}`, async () => {
      await assertSqsError(create('v-source', { RedrivePolicy: raw }), invalidParameterValue(message));
    });
  }

  test('SetQueueAttributes gives the same errors and changes nothing', async () => {
    const url = await createQueue(sqs, 'v-set');
    for (const [, raw, message] of cases) {
      await assertSqsError(set(url, { RedrivePolicy: raw }), invalidParameterValue(message));
    }
    assert.equal((await attributes(sqs, url)).RedrivePolicy, undefined);
  });

  test('a FIFO source needs a FIFO target', async () => {
    const raw = policy(arn('v-dlq'));
    await assertSqsError(
      create('v-src.fifo', { FifoQueue: 'true', RedrivePolicy: raw }),
      invalidParameterValue(reason(raw, 'Dead-letter queue must be same type of queue as the source..')),
    );
    await create('v-src.fifo', { FifoQueue: 'true', RedrivePolicy: policy(arn('v-dlq.fifo')) });
  });

  test('maxReceiveCount as a string is accepted and returned as a number; an empty policy removes it', async () => {
    const url = await createQueue(sqs, 'v-ok', { RedrivePolicy: policy(arn('v-dlq'), '42') });
    const stored = JSON.parse((await attributes(sqs, url)).RedrivePolicy!);
    assert.deepEqual(stored, { deadLetterTargetArn: arn('v-dlq'), maxReceiveCount: 42 });
    await set(url, { RedrivePolicy: '' });
    assert.equal((await attributes(sqs, url)).RedrivePolicy, undefined);
  });

  test('a queue may be its own dead-letter queue, as in SQS', async () => {
    const url = await createQueue(sqs, 'v-self');
    await set(url, { RedrivePolicy: policy(arn('v-self')) });
    assert.equal(JSON.parse((await attributes(sqs, url)).RedrivePolicy!).deadLetterTargetArn, arn('v-self'));
  });
});

describe('RedriveAllowPolicy validation', () => {
  const unsupported =
    "Invalid value for the parameter RedriveAllowPolicy. Reason: Amazon SQS can't create the redrive allow policy, as it’s in an unsupported format.";
  const elevenArns = JSON.stringify({
    redrivePermission: 'byQueue',
    sourceQueueArns: Array.from({ length: 11 }, (_, i) => arn(`s${i}`)),
  });
  const cases: [string, string, string][] = [
    ['not JSON', 'badjson', unsupported],
    ['no redrivePermission', '{}', unsupported],
    ['an unknown permission', '{"redrivePermission":"dummy"}', unsupported],
    ['an unknown field', '{"redrivePermission":"allowAll","x":1}', unsupported],
    ['sourceQueueArns not a list', '{"redrivePermission":"byQueue","sourceQueueArns":"arn"}', unsupported],
    [
      'byQueue without ARNs',
      '{"redrivePermission":"byQueue"}',
      allowReason(
        '{"redrivePermission":"byQueue"}',
        "Amazon SQS can't create the redrive allow policy. When you specify the byQueue permission type, you must also specify one or more sourceQueueArns values.",
      ),
    ],
    [
      'byQueue with an empty list',
      '{"redrivePermission":"byQueue","sourceQueueArns":[]}',
      allowReason(
        '{"redrivePermission":"byQueue","sourceQueueArns":[]}',
        "Amazon SQS can't create the redrive allow policy. When you specify the byQueue permission type, you must also specify one or more sourceQueueArns values.",
      ),
    ],
    [
      '11 source ARNs',
      elevenArns,
      allowReason(
        elevenArns,
        "Amazon SQS can't create the redrive allow policy. The maximum number of source queue ARNs you can specify is 10.",
      ),
    ],
    [
      'ARNs with denyAll',
      `{"redrivePermission":"denyAll","sourceQueueArns":["${arn('x')}"]}`,
      allowReason(
        `{"redrivePermission":"denyAll","sourceQueueArns":["${arn('x')}"]}`,
        "Amazon SQS can't create the redrive allow policy. To specify one or more source queue ARNs, you must set redrivePermission to byQueue.",
      ),
    ],
  ];
  for (const [what, raw, message] of cases) {
    test(`rejects ${what}`, async () => {
      await assertSqsError(create('a-bad', { RedriveAllowPolicy: raw }), invalidParameterValue(message));
    });
  }

  test('accepts 10 source ARNs', async () => {
    const ten = JSON.stringify({
      redrivePermission: 'byQueue',
      sourceQueueArns: Array.from({ length: 10 }, (_, i) => arn(`s${i}`)),
    });
    const url = await createQueue(sqs, 'a-ten', { RedriveAllowPolicy: ten });
    assert.equal((await attributes(sqs, url)).RedriveAllowPolicy, ten);
  });
});

describe('RedriveAllowPolicy enforcement', () => {
  const denied = /does not allow this queue to use it as a dead-letter queue/;

  test('allowAll, the default, admits any source of the account', async () => {
    const all = await createQueue(sqs, 'e-all', { RedriveAllowPolicy: '{"redrivePermission":"allowAll"}' });
    const src1 = await createQueue(sqs, 'e-src1', { RedrivePolicy: policy(arn('e-all')) });
    const none = await createQueue(sqs, 'e-none');
    const src2 = await createQueue(sqs, 'e-src2', { RedrivePolicy: policy(arn('e-none')) });
    for (const [dlq, src, name] of [
      [all, src1, 'e-all'],
      [none, src2, 'e-none'],
    ]) {
      assert.deepEqual(JSON.parse((await attributes(sqs, src)).RedrivePolicy!), {
        deadLetterTargetArn: arn(name),
        maxReceiveCount: 3,
      });
      const sources = await sqs.send(new ListDeadLetterSourceQueuesCommand({ QueueUrl: dlq }));
      assert.deepEqual(sources.queueUrls, [src], `${name} lists its source`);
    }
  });

  test('denyAll admits none, on CreateQueue and SetQueueAttributes', async () => {
    await createQueue(sqs, 'e-deny', { RedriveAllowPolicy: '{"redrivePermission":"denyAll"}' });
    await assertSqsError(create('e-src3', { RedrivePolicy: policy(arn('e-deny')) }), invalidParameterValue(denied));
    const url = await createQueue(sqs, 'e-src4');
    await assertSqsError(set(url, { RedrivePolicy: policy(arn('e-deny')) }), invalidParameterValue(denied));
  });

  test('byQueue admits exactly the listed sources', async () => {
    await createQueue(sqs, 'e-by', {
      RedriveAllowPolicy: JSON.stringify({ redrivePermission: 'byQueue', sourceQueueArns: [arn('e-listed')] }),
    });
    await createQueue(sqs, 'e-listed', { RedrivePolicy: policy(arn('e-by')) });
    await assertSqsError(create('e-unlisted', { RedrivePolicy: policy(arn('e-by')) }), invalidParameterValue(denied));
  });

  test('a later allow-policy change keeps attached sources dead-lettering, but blocks re-attaching', async () => {
    const dlq = await createQueue(sqs, 'e-later');
    const src = await createQueue(sqs, 'e-later-src', { RedrivePolicy: policy(arn('e-later'), 1) });
    await set(dlq, { RedriveAllowPolicy: '{"redrivePermission":"denyAll"}' });
    await sqs.send(new SendMessageCommand({ QueueUrl: src, MessageBody: 'still protected' }));
    assert.equal((await receive(sqs, src, { VisibilityTimeout: 0 })).length, 1);
    assert.equal((await receive(sqs, src, { VisibilityTimeout: 0 })).length, 0);
    assert.equal((await counts(sqs, dlq)).visible, 1, 'the message was dead-lettered despite denyAll');
    await assertSqsError(set(src, { RedrivePolicy: policy(arn('e-later'), 2) }), invalidParameterValue(denied));
  });
});

describe('a deleted dead-letter queue', () => {
  test('stops dead-lettering: messages stay in the source; a re-created queue resumes it', async () => {
    const dlq = await createQueue(sqs, 'd-dlq');
    const src = await createQueue(sqs, 'd-src', { RedrivePolicy: policy(arn('d-dlq'), 1) });
    await sqs.send(new DeleteQueueCommand({ QueueUrl: dlq }));
    await sqs.send(new SendMessageCommand({ QueueUrl: src, MessageBody: 'kept' }));
    for (let i = 1; i <= 3; i++) {
      const [m] = await receive(sqs, src, {
        VisibilityTimeout: 0,
        MessageSystemAttributeNames: ['ApproximateReceiveCount'],
      });
      assert.equal(m?.Body, 'kept');
      assert.equal(m!.Attributes!.ApproximateReceiveCount, String(i));
    }
    const again = await createQueue(sqs, 'd-dlq');
    assert.deepEqual(await receive(sqs, src, { VisibilityTimeout: 0 }), []);
    assert.equal((await counts(sqs, again)).visible, 1);
  });
});

describe('ListDeadLetterSourceQueues', () => {
  before(async () => {
    await createQueue(sqs, 'l-dlq');
    for (const n of ['l-e', 'l-a', 'l-d', 'l-c', 'l-b'])
      await createQueue(sqs, n, { RedrivePolicy: policy(arn('l-dlq')) });
  });
  const list = (QueueUrl: string, MaxResults?: number, NextToken?: string) =>
    sqs.send(new ListDeadLetterSourceQueuesCommand({ QueueUrl, MaxResults, NextToken }));

  test('lists every source, without a NextToken unless MaxResults is given', async () => {
    const dlq = `${server.url}/000000000000/l-dlq`;
    const all = await list(dlq);
    assert.deepEqual(
      all.queueUrls?.map((u) => u.split('/').pop()),
      ['l-a', 'l-b', 'l-c', 'l-d', 'l-e'],
    );
    assert.equal(all.NextToken, undefined);
  });

  test('pages with MaxResults and NextToken', async () => {
    const dlq = `${server.url}/000000000000/l-dlq`;
    const names: string[][] = [];
    let token: string | undefined;
    do {
      const page = await list(dlq, 2, token);
      names.push(page.queueUrls!.map((u) => u.split('/').pop()!));
      token = page.NextToken;
    } while (token);
    assert.deepEqual(names, [['l-a', 'l-b'], ['l-c', 'l-d'], ['l-e']]);
  });

  test('a queue nobody targets has no sources; errors for bad input', async () => {
    const lonely = await createQueue(sqs, 'l-lonely');
    assert.deepEqual((await list(lonely)).queueUrls ?? [], []);
    await assertSqsError(list(`${server.url}/000000000000/l-nope`), queueDoesNotExist);
    await assertSqsError(
      list(lonely, 0),
      invalidParameterValue(
        'Value 0 for parameter MaxResults is invalid. Reason: Must be between 1 and 1000, if provided.',
      ),
    );
  });
});

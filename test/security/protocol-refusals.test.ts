/**
 * Small refusals that keep one tenant from passing as another or slipping past a rule, each
 * with the protocol's own answer: an AMQP `user-id` that is not the connection's user, the
 * AMQP envelope (`RedriveAmqp`) from another account's sender, ARNs outside the queue-name
 * rule, guesses at the /metrics bearer token, the --metrics-address listener under
 * --credentials, and an open-mode POST without a Content-Type.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, test } from 'node:test';
import amqp from 'amqplib';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  SendMessageCommand,
  SetQueueAttributesCommand,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import { startTenants, TENANTS, type TenantServer } from '../support/hostile-tenant.js';
import { startServerProcess } from '../support/server-process.js';

let t: TenantServer;
let victimQueue: string;
let victimArn: string;
before(async () => {
  t = await startTenants({ amqp: true, args: ['--trust-proxy', '127.0.0.1'] });
  const victim = t.client('victim');
  ({ QueueUrl: victimQueue } = (await victim.send(new CreateQueueCommand({ QueueName: 'victim-q' }))) as {
    QueueUrl: string;
  });
  victimArn = (
    await victim.send(new GetQueueAttributesCommand({ QueueUrl: victimQueue, AttributeNames: ['QueueArn'] }))
  ).Attributes!.QueueArn!;
  // The victim lets the attacker send: what a sender may claim is the question.
  const policy = {
    Statement: [
      {
        Effect: 'Allow',
        Principal: { AWS: TENANTS.attacker.accountId },
        Action: 'sqs:SendMessage',
        Resource: victimArn,
      },
    ],
  };
  await victim.send(
    new SetQueueAttributesCommand({ QueueUrl: victimQueue, Attributes: { Policy: JSON.stringify(policy) } }),
  );
});
after(() => t.stop());

function get(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; text: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

test("an AMQP user-id that is not the connection's user is refused as RabbitMQ refuses it", async () => {
  const conn = await amqp.connect(t.amqpUrl('attacker'));
  try {
    const ch = await conn.createChannel();
    const { queue } = await ch.assertQueue('user-id-q');
    // The connection's own user is accepted, and delivered with it.
    ch.sendToQueue(queue, Buffer.from('own'), { userId: TENANTS.attacker.accessKeyId });
    const own = await new Promise<amqp.GetMessage | false>((r) =>
      setTimeout(() => r(ch.get(queue, { noAck: true })), 200),
    );
    assert.ok(own, 'the message with the own user-id arrived');
    assert.equal(own.properties.userId, TENANTS.attacker.accessKeyId);
    const closed = new Promise<Error>((resolve, reject) => {
      ch.once('error', resolve);
      setTimeout(() => reject(new Error('the forged user-id was not refused within 5 s')), 5000).unref();
    });
    ch.sendToQueue(queue, Buffer.from('forged'), { userId: TENANTS.victim.accessKeyId });
    const err = (await closed) as Error & { code?: number };
    assert.equal(err.code, 406);
    assert.match(
      err.message,
      new RegExp(
        `PRECONDITION_FAILED - user_id property set to '${TENANTS.victim.accessKeyId}' but authenticated user was '${TENANTS.attacker.accessKeyId}'`,
      ),
    );
    // Nothing of the forged publish was stored.
    const check = await conn.createChannel();
    assert.equal((await check.checkQueue(queue)).messageCount, 0);
  } finally {
    await conn.close();
  }
});

test('the AMQP envelope (RedriveAmqp) is refused from a sender of another account, as an unknown system attribute', async () => {
  const envelope = {
    DataType: 'String',
    StringValue: JSON.stringify({ exchange: '', routingKey: 'x', properties: { userId: 'someone' } }),
  };
  await assert.rejects(
    t.client('attacker').send(
      new SendMessageCommand({
        QueueUrl: victimQueue,
        MessageBody: 'm',
        MessageSystemAttributes: { RedriveAmqp: envelope },
      } as never),
    ),
    (e: Error) =>
      e.name === 'InvalidParameterValue' && e.message === "Message system attribute name 'RedriveAmqp' is invalid.",
  );
  // The grant itself still works.
  await t.client('attacker').send(new SendMessageCommand({ QueueUrl: victimQueue, MessageBody: 'granted' }));
});

test('an ARN with a newline or characters outside the queue-name rule is refused', async () => {
  const sqs = t.client('victim');
  const bad = [
    `${victimArn}\nx`,
    `${victimArn.replace('victim-q', 'victim q')}`,
    `${victimArn}:extra`,
    `${victimArn}/x`,
  ];
  for (const arn of bad) {
    await assert.rejects(
      sqs.send(
        new SendMessageCommand({
          QueueUrl: victimQueue,
          MessageBody: 'm',
          MessageSystemAttributes: { DeadLetterQueueSourceArn: { DataType: 'String', StringValue: arn } },
        } as never),
      ),
      (e: Error) =>
        e.name === 'InvalidParameterValue' &&
        e.message === 'Message system attribute DeadLetterQueueSourceArn is invalid. Reason: it must be a queue ARN.',
      JSON.stringify(arn),
    );
    const policy = JSON.stringify({ deadLetterTargetArn: arn, maxReceiveCount: 3 });
    await assert.rejects(
      sqs.send(new SetQueueAttributesCommand({ QueueUrl: victimQueue, Attributes: { RedrivePolicy: policy } })),
      (e: Error) => e.name === 'InvalidParameterValue',
      `RedrivePolicy ${JSON.stringify(arn)}`,
    );
    await assert.rejects(sqs.send(new StartMessageMoveTaskCommand({ SourceArn: arn })), (e: Error) =>
      ['ResourceNotFoundException', 'InvalidParameterValue'].includes(e.name),
    );
  }
});

test('guesses at the /metrics bearer token are throttled per client, and other clients are still served', async () => {
  const url = `${t.server.url}/metrics`;
  const guesser = { 'x-forwarded-for': '203.0.113.9' };
  const statuses: number[] = [];
  for (let i = 0; i < 12; i++)
    statuses.push((await get(url, { ...guesser, authorization: `Bearer guess-${i}` })).status);
  assert.deepEqual(statuses.slice(0, 10), Array(10).fill(401), 'ten free failures');
  assert.equal(statuses[11], 429, 'then the address waits');
  const throttled = await get(url, { ...guesser, authorization: 'Bearer hostile-tenant-metrics-token' });
  assert.equal(throttled.status, 429, 'even the right token is not checked while the address waits');
  assert.ok(Number(throttled.headers['retry-after']) >= 1);
  assert.match(throttled.text, /Too many failed authentication attempts; retry after \d+ seconds/);
  const other = await get(url, {
    'x-forwarded-for': '198.51.100.7',
    authorization: 'Bearer hostile-tenant-metrics-token',
  });
  assert.equal(other.status, 200, 'another client with the token is served');
});

test('the --metrics-address listener checks Host and cross-site requests under --credentials without --allowed-hosts', async () => {
  const s = await startServerProcess({
    storage: 'memory',
    credentials: { AKIDMETRICS0000001: { secretAccessKey: 'metrics-secret', accountId: '111111111111' } },
    args: ['--metrics-address', '127.0.0.1:0'],
  });
  try {
    const url = /"metrics":"(http:\/\/[^"]+)"/.exec(s.output())![1]!;
    const port = new URL(url).port;
    const rebound = await get(url, { host: `evil.example:${port}` });
    assert.equal(rebound.status, 403);
    assert.doesNotMatch(rebound.text, /redrive_/, 'no metric in the refusal');
    const crossSite = await get(url, { host: `127.0.0.1:${port}`, 'sec-fetch-site': 'cross-site' });
    assert.equal(crossSite.status, 403);
    const foreignOrigin = await get(url, { host: `127.0.0.1:${port}`, origin: 'http://evil.example' });
    assert.equal(foreignOrigin.status, 403);
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`]) {
      const ok = await get(url, { host });
      assert.equal(ok.status, 200, host);
      assert.match(ok.text, /# TYPE redrive_long_polls_waiting gauge/);
    }
  } finally {
    await s.stop();
    s.cleanup();
  }
});

function post(url: string, headers: Record<string, string>, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

test('open mode: an unsigned POST without a Content-Type is held to the unsigned-form rule', async () => {
  const s = await startServerProcess({ storage: 'memory' });
  try {
    const body = 'Action=CreateQueue&QueueName=from-a-page';
    // What `fetch(url, { method: 'POST', mode: 'no-cors', body: new Blob([...]) })` sends.
    const page = await post(`${s.url}/`, { 'content-length': String(body.length) }, body);
    assert.equal(page.status, 403, page.text);
    assert.match(page.text, /AccessDenied/);
    assert.match(s.output(), /unsigned form request/);
    const sdk = await post(`${s.url}/`, { 'content-length': String(body.length), 'amz-sdk-invocation-id': 'x' }, body);
    assert.notEqual(sdk.status, 403, 'a client with an SDK header is not held to the rule');
    // A GET has no body: the query string is the request, as curl sends it.
    const list = await get(`${s.url}/?Action=ListQueues`, {});
    assert.equal(list.status, 200);
  } finally {
    await s.stop();
    s.cleanup();
  }
});

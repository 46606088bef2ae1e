/**
 * A pollution attempt through every decoder a client reaches is inert: prototype-shaped
 * keys (`__proto__`, `constructor`, `prototype`) holding an allow-all Policy, sent as JSON
 * and Query maps (attributes, message attributes, system attributes, tags), inside the
 * Policy and RedrivePolicy JSON, as AMQP headers, declare and bind arguments, as the
 * management API's policy definitions, sort keys and columns, and as SigV4 header fields.
 * Afterwards the victim's queue, which has no Policy of its own, still refuses the
 * attacker, the bystander was served throughout, and no decoder threw past its own errors.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import amqp from 'amqplib';
import { CreateQueueCommand } from '@aws-sdk/client-sqs';
import { jsonRequest, send, signer, type RawRequest } from '../query/signed-request.js';
import { assertServed, startTenants, TENANTS, type TenantServer } from '../support/hostile-tenant.js';
import {
  ALLOW_ALL,
  assertNoUncaught,
  assertVictimRefused,
  hostileConnection,
  management,
  PROTOTYPE_KEYS,
} from './pollution.js';

let t: TenantServer;
let victimQueue: string;
let ownQueue: string;
before(async () => {
  t = await startTenants({ amqp: true });
  ({ QueueUrl: victimQueue } = (await t.client('victim').send(new CreateQueueCommand({ QueueName: 'victim-q' }))) as {
    QueueUrl: string;
  });
  ({ QueueUrl: ownQueue } = (await t.client('attacker').send(new CreateQueueCommand({ QueueName: 'own-q' }))) as {
    QueueUrl: string;
  });
});
after(() => t.stop());

/** `{"__proto__": v, "constructor": {"prototype": v}, "prototype": v}` as JSON text (a literal would set the prototype). */
const hostileJson = (v: unknown) => {
  const inner = JSON.stringify(v);
  return `{"__proto__": ${inner}, "constructor": {"prototype": ${inner}}, "prototype": ${inner}}`;
};
const policyObject = { Policy: ALLOW_ALL };
const stringValue = { DataType: 'String', StringValue: ALLOW_ALL };

async function signedJson(action: string, body: string) {
  const host = new URL(t.server.url).host;
  const signed = await signer(TENANTS.attacker).sign(jsonRequest(host, action, body));
  return send(t.server.url, signed as RawRequest);
}

async function signedQuery(params: Record<string, string>) {
  const host = new URL(t.server.url).host;
  const body = new URLSearchParams({ Version: '2012-11-05', ...params }).toString();
  const req = {
    method: 'POST',
    protocol: 'http:',
    hostname: host.split(':')[0]!,
    path: '/',
    headers: { host, 'content-type': 'application/x-www-form-urlencoded' },
    body,
  };
  return send(t.server.url, (await signer(TENANTS.attacker).sign(req)) as RawRequest);
}

/** Each attempt may be refused or served; what matters is what it leaves behind. */
async function attempts(): Promise<string[]> {
  const answers: string[] = [];
  const note = (what: string, status: number) => answers.push(`${what}: ${status}`);
  // JSON maps.
  for (const [action, body] of [
    ['CreateQueue', `{"QueueName": "json-a", "Attributes": ${hostileJson(ALLOW_ALL)}, "tags": ${hostileJson('x')}}`],
    ['SetQueueAttributes', `{"QueueUrl": "${ownQueue}", "Attributes": ${hostileJson(ALLOW_ALL)}}`],
    ['TagQueue', `{"QueueUrl": "${ownQueue}", "Tags": ${hostileJson('x')}}`],
    [
      'SendMessage',
      `{"QueueUrl": "${ownQueue}", "MessageBody": "m", "MessageAttributes": ${hostileJson(stringValue)}, "MessageSystemAttributes": ${hostileJson(stringValue)}}`,
    ],
    [
      'SendMessageBatch',
      `{"QueueUrl": "${ownQueue}", "Entries": [{"Id": "a", "MessageBody": "m", "MessageAttributes": ${hostileJson(stringValue)}}]}`,
    ],
    [
      'SendMessage',
      `{"QueueUrl": "${ownQueue}", "MessageBody": "m", "MessageAttributes": ${hostileJson(stringValue)}}`,
    ],
    ['ReceiveMessage', `{"QueueUrl": "${ownQueue}", "MaxNumberOfMessages": 10, "MessageAttributeNames": ["All"]}`],
    ['GetQueueAttributes', `{"QueueUrl": "${ownQueue}", "AttributeNames": ["__proto__", "constructor", "Policy"]}`],
    ['CreateQueue', hostileJson(policyObject)],
  ] as const) {
    note(`JSON ${action}`, (await signedJson(action, body)).status);
  }
  // Query maps.
  for (const key of PROTOTYPE_KEYS) {
    const r = await signedQuery({
      Action: 'CreateQueue',
      QueueName: `query-${key.replace(/_/g, '')}`,
      'Attribute.1.Name': key,
      'Attribute.1.Value': ALLOW_ALL,
      'Tag.1.Key': key,
      'Tag.1.Value': 'x',
    });
    note(`Query CreateQueue ${key}`, r.status);
    const m = await signedQuery({
      Action: 'SendMessage',
      QueueUrl: ownQueue,
      MessageBody: 'm',
      'MessageAttribute.1.Name': key,
      'MessageAttribute.1.Value.DataType': 'String',
      'MessageAttribute.1.Value.StringValue': ALLOW_ALL,
    });
    note(`Query SendMessage ${key}`, m.status);
  }
  const received = await signedQuery({ Action: 'ReceiveMessage', QueueUrl: ownQueue, 'MessageAttributeName.1': 'All' });
  note('Query ReceiveMessage', received.status);
  // Policy and RedrivePolicy JSON on the attacker's own queue.
  for (const [name, value] of [
    ['Policy', hostileJson({ Statement: [{ Effect: 'Allow', Principal: '*', Action: '*' }] })],
    ['RedrivePolicy', hostileJson({ deadLetterTargetArn: victimQueue, maxReceiveCount: 1 })],
    ['RedriveAllowPolicy', hostileJson({ redrivePermission: 'allowAll' })],
  ]) {
    note(
      `${name} JSON`,
      (await signedJson('SetQueueAttributes', JSON.stringify({ QueueUrl: ownQueue, Attributes: { [name]: value } })))
        .status,
    );
  }
  // SigV4: prototype-shaped fields in the Authorization header (no valid signature).
  const host = new URL(t.server.url).host;
  const forged = jsonRequest(host, 'ListQueues');
  const fields =
    'AWS4-HMAC-SHA256 __proto__=x, constructor=y, Credential=__proto__/20260101/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=00';
  note(
    'SigV4 fields',
    (await send(t.server.url, forged, { authorization: fields, 'x-amz-date': '20260101T000000Z' })).status,
  );
  // AMQP: client properties, headers, declare and bind arguments.
  const raw = await hostileConnection(t.amqpPort!, 'attacker');
  const conn = await amqp.connect(t.amqpUrl('attacker'));
  try {
    const ch = await conn.createChannel();
    const args = JSON.parse(hostileJson(ALLOW_ALL)) as Record<string, unknown>;
    await ch.assertExchange('hostile-headers', 'headers', { arguments: args });
    const q = await ch.assertQueue('hostile-q', { arguments: args });
    await ch.bindQueue(q.queue, 'hostile-headers', '', { ...args, 'x-match': 'any' });
    ch.publish('hostile-headers', '', Buffer.from('m'), { headers: args });
    ch.sendToQueue(q.queue, Buffer.from('m'), { headers: JSON.parse(hostileJson(policyObject)) });
    await ch.close();
  } finally {
    await conn.close();
    raw.close();
  }
  // The management API: policy definitions, sort keys, columns.
  const put = await management(t, 'attacker', '/api/policies/%2F/hostile', {
    method: 'PUT',
    body: `{"pattern": "^own", "apply-to": "queues", "definition": ${hostileJson(ALLOW_ALL)}}`,
  });
  note('management policy', put.status);
  for (const path of [
    '/api/queues?sort=__proto__.Policy&columns=__proto__.Policy,constructor.prototype.Policy',
    '/api/exchanges?columns=arguments.__proto__.Policy&sort=constructor',
    '/api/bindings?columns=arguments.__proto__.Policy',
    '/api/policies?columns=definition.__proto__.Policy',
  ]) {
    note(`management ${path}`, (await management(t, 'attacker', path)).status);
  }
  return answers;
}

test('pollution attempts through every decoder leave nothing behind', async (ctx) => {
  const probe = await t.probe();
  const answers = await attempts();
  ctx.diagnostic(answers.join('; '));
  assertServed(await probe.stop(), 'pollution attempts through every decoder');
  // No decoder failed with a 5xx: each refused or served as its protocol says.
  assert.deepEqual(
    answers.filter((a) => /: 5\d\d$/.test(a)),
    [],
    answers.join('\n'),
  );
  await assertVictimRefused(t, victimQueue);
  assertNoUncaught(t);
});

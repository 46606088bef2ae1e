/**
 * The management API's dotted `columns` once walked into a client's AMQP client-properties
 * table, where `__proto__` was an ordinary key: `client_properties.__proto__.Policy` wrote
 * an allow-all statement onto Object.prototype, and every queue without a Policy of its own
 * then granted the attacker everything. Here the attacker tries that path and its
 * variations while the bystander is served, and must still be refused at the victim's queue.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  PurgeQueueCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  CreateQueueCommand,
} from '@aws-sdk/client-sqs';
import { field, type FieldTable } from '../../src/protocols/amqp/codec.js';
import { RawClient } from '../amqp/raw-client.js';
import { assertServed, startTenants, TENANTS, type Tenant, type TenantServer } from '../support/hostile-tenant.js';

const ALLOW_ALL = JSON.stringify({
  Version: '2012-10-17',
  Statement: [{ Effect: 'Allow', Principal: '*', Action: 'sqs:*', Resource: '*' }],
});

/** Columns that walk through a prototype: each would write `Policy` onto a shared object. */
const HOSTILE_COLUMNS = [
  'client_properties.__proto__.Policy',
  'client_properties.constructor.prototype.Policy',
  '__proto__.Policy',
  'constructor.prototype.Policy',
  'client_properties.__proto__.__proto__.Policy',
  'client_properties.prototype.Policy',
];

let t: TenantServer;
let victimQueue: string;
before(async () => {
  t = await startTenants({ amqp: true });
  ({ QueueUrl: victimQueue } = (await t.client('victim').send(new CreateQueueCommand({ QueueName: 'victim-q' }))) as {
    QueueUrl: string;
  });
});
after(() => t.stop());

/** A table holding the allow-all Policy under each prototype-shaped key, nested too. */
function hostileTable(): FieldTable {
  const policy = field.table({ Policy: field.str(ALLOW_ALL) });
  return new Map([
    ['__proto__', policy],
    ['constructor', field.table({ prototype: policy })],
    ['prototype', policy],
    ['Policy', field.str(ALLOW_ALL)],
    ['product', field.str('hostile')],
  ]);
}

/** An AMQP connection signed in as the tenant, its client-properties `hostileTable()`. */
function hostileConnection(port: number, tenant: Tenant): Promise<RawClient> {
  const k = TENANTS[tenant];
  return RawClient.signedIn(port, { user: k.accessKeyId, password: k.secretAccessKey }, hostileTable());
}

function managementGet(path: string, tenant: Tenant): Promise<Response> {
  const k = TENANTS[tenant];
  const auth = Buffer.from(`${k.accessKeyId}:${k.secretAccessKey}`).toString('base64');
  return fetch(`${t.server.url}${path}`, { headers: { authorization: `Basic ${auth}` } });
}

/** Every cross-account action on the victim's queue is refused with AccessDenied. */
async function assertVictimRefused(server: TenantServer, queueUrl: string): Promise<void> {
  const sqs = server.client('attacker');
  const attempts = [
    new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'stolen' }),
    new ReceiveMessageCommand({ QueueUrl: queueUrl }),
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['All'] }),
    new PurgeQueueCommand({ QueueUrl: queueUrl }),
    new DeleteQueueCommand({ QueueUrl: queueUrl }),
  ];
  for (const command of attempts) {
    await assert.rejects(
      sqs.send(command as any),
      (e: Error) => e.name === 'AccessDenied' || /AccessDenied/.test(String((e as { Code?: string }).Code)),
      `${command.constructor.name} on the victim's queue`,
    );
  }
  // The victim's queue is untouched.
  await server.client('victim').send(new GetQueueAttributesCommand({ QueueUrl: queueUrl }));
}

test('client-properties with __proto__ keys and dotted columns through them pollute nothing', async () => {
  const probe = await t.probe();
  const amqp = await hostileConnection(t.amqpPort!, 'attacker');
  try {
    for (const column of HOSTILE_COLUMNS) {
      for (const extra of ['', '&page=1', '&sort=client_properties.__proto__.Policy']) {
        const res = await managementGet(`/api/connections?columns=${encodeURIComponent(column)}${extra}`, 'attacker');
        assert.equal(res.status, 200, `${column}${extra}: ${await res.clone().text()}`);
        const body = (await res.json()) as unknown;
        const items = (Array.isArray(body) ? body : (body as { items: unknown[] }).items) as Record<string, unknown>[];
        assert.equal(items.length, 1, `${column}: the attacker's one connection`);
        // Nothing inherited is shown, and nothing was walked into.
        assert.equal(Object.getPrototypeOf(items[0]), Object.prototype);
      }
    }
    // The full listing shows the client's keys as the ordinary keys they are.
    const [full] = (await (await managementGet('/api/connections', 'attacker')).json()) as {
      client_properties: Record<string, unknown>;
    }[];
    assert.equal(full!.client_properties.Policy, ALLOW_ALL);
    assert.equal(full!.client_properties.product, 'hostile');
    await assertVictimRefused(t, victimQueue);
  } finally {
    amqp.close();
  }
  assertServed(await probe.stop(), 'pollution through the management API');
});

/**
 * The management API's dotted `columns` once walked into a client's AMQP client-properties
 * table, where `__proto__` was an ordinary key: `client_properties.__proto__.Policy` wrote
 * an allow-all statement onto Object.prototype, and every queue without a Policy of its own
 * then granted the attacker everything. Here the attacker tries that path and its
 * variations while the bystander is served, and must still be refused at the victim's queue.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { CreateQueueCommand } from '@aws-sdk/client-sqs';
import { assertServed, startTenants, type TenantServer } from '../support/hostile-tenant.js';
import { ALLOW_ALL, assertNoUncaught, assertVictimRefused, hostileConnection, management } from './pollution.js';

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

test('client-properties with __proto__ keys and dotted columns through them pollute nothing', async () => {
  const probe = await t.probe();
  const amqp = await hostileConnection(t.amqpPort!, 'attacker');
  try {
    for (const column of HOSTILE_COLUMNS) {
      for (const extra of ['', '&page=1', '&sort=client_properties.__proto__.Policy']) {
        const res = await management(t, 'attacker', `/api/connections?columns=${encodeURIComponent(column)}${extra}`);
        assert.equal(res.status, 200, `${column}${extra}: ${await res.clone().text()}`);
        const body = (await res.json()) as unknown;
        const items = (Array.isArray(body) ? body : (body as { items: unknown[] }).items) as Record<string, unknown>[];
        assert.equal(items.length, 1, `${column}: the attacker's one connection`);
        // Nothing inherited is shown, and nothing was walked into.
        assert.equal(Object.getPrototypeOf(items[0]), Object.prototype);
      }
    }
    // The full listing shows the client's keys as the ordinary keys they are.
    const [full] = (await (await management(t, 'attacker', '/api/connections')).json()) as {
      client_properties: Record<string, unknown>;
    }[];
    assert.equal(full!.client_properties.Policy, ALLOW_ALL);
    assert.equal(full!.client_properties.product, 'hostile');
    await assertVictimRefused(t, victimQueue);
    assertNoUncaught(t);
  } finally {
    amqp.close();
  }
  assertServed(await probe.stop(), 'pollution through the management API');
});

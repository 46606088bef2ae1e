/**
 * What the prototype-pollution tests share: the allow-all statement an attacker tries to
 * make every queue inherit, a field table holding it under prototype-shaped keys, and the
 * check that the victim's queue (which has no Policy of its own) still refuses the attacker.
 */
import assert from 'node:assert/strict';
import {
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  PurgeQueueCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { field, type FieldTable } from '../../src/protocols/amqp/codec.js';
import { RawClient } from '../amqp/raw-client.js';
import { TENANTS, type Tenant, type TenantServer } from '../support/hostile-tenant.js';

export const ALLOW_ALL = JSON.stringify({
  Version: '2012-10-17',
  Statement: [{ Effect: 'Allow', Principal: '*', Action: 'sqs:*', Resource: '*' }],
});

/** The keys that reach a prototype through a plain object. */
export const PROTOTYPE_KEYS = ['__proto__', 'constructor', 'prototype'] as const;

/** A table holding the allow-all Policy under each prototype-shaped key, nested too. */
export function hostileTable(): FieldTable {
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
export function hostileConnection(port: number, tenant: Tenant): Promise<RawClient> {
  const k = TENANTS[tenant];
  return RawClient.signedIn(port, { user: k.accessKeyId, password: k.secretAccessKey }, hostileTable());
}

/** A management-API request signed in (basic auth) as the tenant. */
export function management(t: TenantServer, tenant: Tenant, path: string, init: RequestInit = {}): Promise<Response> {
  const k = TENANTS[tenant];
  const auth = Buffer.from(`${k.accessKeyId}:${k.secretAccessKey}`).toString('base64');
  return fetch(`${t.server.url}${path}`, {
    ...init,
    headers: { authorization: `Basic ${auth}`, 'content-type': 'application/json' },
  });
}

const refused = (e: Error) => e.name === 'AccessDenied' || /AccessDenied/.test(String((e as { Code?: string }).Code));

/** Every cross-account action on the victim's queue is refused with AccessDenied, and the queue is untouched. */
export async function assertVictimRefused(t: TenantServer, queueUrl: string): Promise<void> {
  const sqs: SQSClient = t.client('attacker');
  const what = "on the victim's queue, which has no Policy";
  await assert.rejects(sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'x' })), refused, what);
  await assert.rejects(sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl })), refused, what);
  await assert.rejects(sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl })), refused, what);
  await assert.rejects(sqs.send(new PurgeQueueCommand({ QueueUrl: queueUrl })), refused, what);
  await assert.rejects(sqs.send(new DeleteQueueCommand({ QueueUrl: queueUrl })), refused, what);
  await t.client('victim').send(new GetQueueAttributesCommand({ QueueUrl: queueUrl }));
}

/** The server logged no uncaught exception (a decoder that threw past its own errors). */
export function assertNoUncaught(t: TenantServer): void {
  assert.doesNotMatch(t.server.output(), /uncaught exception|unhandled promise rejection/);
}

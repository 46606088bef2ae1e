/** Helpers for the dead-letter reason, history and policy tests. */
import assert from 'node:assert/strict';
import { CreateQueueCommand, type Message, type SQSClient } from '@aws-sdk/client-sqs';
import type { Death } from '../../src/wire/messages.js';
import type { ServerProcess } from '../support/server-process.js';
import { waitFor } from './dlq-helpers.js';
import { rawJson, receive } from './helpers.js';

export const arn = (name: string) => `arn:aws:sqs:us-east-1:000000000000:${name}`;
export const redrivePolicy = (target: string, maxReceiveCount = 10) =>
  JSON.stringify({ deadLetterTargetArn: arn(target), maxReceiveCount });

/** The opt-in system attributes with the dead-letter history. */
export const DEATH_NAMES = [
  'RedriveDeathHistory',
  'RedriveFirstDeathQueue',
  'RedriveFirstDeathReason',
  'RedriveLastDeathQueue',
  'RedriveLastDeathReason',
];

export async function create(sqs: SQSClient, name: string, attributes: Record<string, string> = {}): Promise<string> {
  return (await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }))).QueueUrl!;
}

/** The RejectMessage extension over the JSON protocol. */
export async function reject(server: ServerProcess, QueueUrl: string, ReceiptHandle: string, Reason?: string) {
  return rawJson(server.url, 'AmazonSQS.RejectMessage', JSON.stringify({ QueueUrl, ReceiptHandle, Reason }));
}

export async function peek(server: ServerProcess, QueueUrl: string): Promise<Record<string, any>[]> {
  const res = await rawJson(server.url, 'AmazonSQS.PeekMessages', JSON.stringify({ QueueUrl, MaxResults: 100 }));
  assert.equal(res.status, 200, res.text);
  return (res.json.Messages as Record<string, any>[]) ?? [];
}

/** Waits (briefly, in real time) until the queue holds `n` messages, e.g. after the expiry sweep. */
export async function waitForDepth(server: ServerProcess, QueueUrl: string, n: number): Promise<Record<string, any>[]> {
  return waitFor(
    () => peek(server, QueueUrl),
    (ms) => ms.length === n,
    `${n} messages in ${QueueUrl}`,
  );
}

/**
 * Moves the server clock a second at a time until the queue holds `n` messages. One
 * big jump would not do: the expiry sweep schedules its next run only when the previous
 * one has finished, which on a slower store may be after the jump.
 */
export async function advanceUntilDepth(
  server: ServerProcess,
  QueueUrl: string,
  n: number,
  maxSeconds = 60,
): Promise<Record<string, any>[]> {
  for (let i = 0; i < maxSeconds; i++) {
    // A queue that does not exist yet (redrive-cycles, made with its first message) holds nothing.
    const res = await rawJson(server.url, 'AmazonSQS.PeekMessages', JSON.stringify({ QueueUrl, MaxResults: 100 }));
    const missing = res.status === 400 && /QueueDoesNotExist/.test(res.text);
    assert.ok(res.status === 200 || missing, res.text);
    const ms = missing ? [] : ((res.json.Messages as Record<string, any>[]) ?? []);
    if (ms.length === n) return ms;
    await server.advanceClock(1_000);
    await new Promise((r) => setTimeout(r, 20));
  }
  return waitForDepth(server, QueueUrl, n);
}

/** Receives one message with its history attributes. */
export async function receiveWithHistory(
  sqs: SQSClient,
  QueueUrl: string,
  extra: Record<string, unknown> = {},
): Promise<Message> {
  const [m] = await receive(sqs, QueueUrl, { MessageSystemAttributeNames: DEATH_NAMES as never, ...extra });
  assert.ok(m, `a message in ${QueueUrl}`);
  return m;
}

export const history = (m: Message): Death[] =>
  JSON.parse(m.Attributes?.['RedriveDeathHistory' as never] ?? '[]') as Death[];
/** [queue, reason, count] of each entry, newest first. */
export const entries = (m: Message) => history(m).map((d) => [d.queue, d.reason, d.count]);
export const attr = (m: Message, name: string) => m.Attributes?.[name as never];

import { sqsError } from '../kernel/errors.js';
import type { QueueRecord } from '../kernel/types.js';

/**
 * Access policies (a queue's Policy attribute, IAM's JSON): every call from another
 * account is checked against it (permission-actions.ts edits it). The owner needs no policy.
 *
 * Evaluation is the subset of IAM that SQS queue policies use in practice: Allow and
 * Deny statements with an AWS principal (account id, account root ARN, or "*"), an
 * action (SQS:Name, SQS:*, *), and the queue's ARN or "*" as resource. A statement with
 * a Condition is not understood, so it never allows (and a Deny with one still denies).
 */
export interface Statement {
  Sid?: string;
  Effect?: string;
  Principal?: string | { AWS?: string | string[] };
  Action?: string | string[];
  Resource?: string | string[];
  Condition?: unknown;
}

export interface AccessPolicy {
  Version?: string;
  Id?: string;
  Statement?: Statement[] | Statement;
}

/**
 * Actions another account may be granted; batch actions go with their single forms, and
 * Redrive's extensions with the SQS action that grants the same power.
 */
export const GRANTABLE = [
  'SendMessage',
  'ReceiveMessage',
  'DeleteMessage',
  'ChangeMessageVisibility',
  'GetQueueAttributes',
  'GetQueueUrl',
  'ListDeadLetterSourceQueues',
  'PurgeQueue',
  'ListQueueTags',
  '*',
];
const AS_SINGLE: Record<string, string> = {
  SendMessageBatch: 'SendMessage',
  DeleteMessageBatch: 'DeleteMessage',
  ChangeMessageVisibilityBatch: 'ChangeMessageVisibility',
  DeleteMessagesById: 'DeleteMessage',
  ChangeMessageVisibilityById: 'ChangeMessageVisibility',
  MoveMessagesById: 'StartMessageMoveTask',
  GetDeadLetterBreakdown: 'GetQueueAttributes',
  GetQueueActivity: 'GetQueueAttributes',
};

export const list = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

export function readAccessPolicy(queue: QueueRecord): AccessPolicy {
  try {
    return queue.attributes.Policy ? (JSON.parse(queue.attributes.Policy) as AccessPolicy) : {};
  } catch {
    return {};
  }
}

function matches(s: Statement, accountId: string, action: string, arn: string): boolean {
  const principals = typeof s.Principal === 'string' ? [s.Principal] : list(s.Principal?.AWS);
  const principalOk = principals.some((p) => p === '*' || p === accountId || p === `arn:aws:iam::${accountId}:root`);
  const actionOk = list(s.Action).some((a) => {
    const name = a.toLowerCase();
    return name === '*' || name === 'sqs:*' || name === `sqs:${action.toLowerCase()}`;
  });
  const resources = list(s.Resource);
  const resourceOk = resources.length === 0 || resources.some((r) => r === '*' || r === arn);
  return principalOk && actionOk && resourceOk;
}

/** Whether `accountId` may call `action` on a queue it does not own. */
export function policyAllows(queue: QueueRecord, arn: string, accountId: string, action: string): boolean {
  const wanted = AS_SINGLE[action] ?? action;
  if (wanted === 'AddPermission' || wanted === 'RemovePermission') return false; // owner only
  const statements = list(readAccessPolicy(queue).Statement);
  const hits = statements.filter((s) => matches(s, accountId, wanted, arn));
  if (hits.some((s) => s.Effect === 'Deny')) return false;
  return hits.some((s) => s.Effect === 'Allow' && s.Condition === undefined);
}

export function accessDenied(queueUrl: string) {
  return sqsError('AccessDenied', `Access to the resource ${queueUrl} is denied.`);
}

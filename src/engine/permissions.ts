import type { Engine } from './engine.js';
import { errors, sqsError } from './errors.js';
import type { QueueRecord, RequestContext } from './types.js';

/**
 * Queue policies: AddPermission / RemovePermission edit the queue's Policy attribute, and
 * every call from another account is checked against it. The owner needs no policy.
 *
 * Evaluation is the subset of IAM that SQS queue policies use in practice: Allow and
 * Deny statements with an AWS principal (account id, account root ARN, or "*"), an
 * action (SQS:Name, SQS:*, *), and the queue's ARN or "*" as resource. A statement with
 * a Condition is not understood, so it never allows (and a Deny with one still denies).
 */
interface Statement {
  Sid?: string;
  Effect?: string;
  Principal?: string | { AWS?: string | string[] };
  Action?: string | string[];
  Resource?: string | string[];
  Condition?: unknown;
}

interface Policy {
  Version?: string;
  Id?: string;
  Statement?: Statement[] | Statement;
}

/** Actions another account may be granted; batch actions go with their single forms. */
const GRANTABLE = ['SendMessage', 'ReceiveMessage', 'DeleteMessage', 'ChangeMessageVisibility', 'GetQueueAttributes', 'GetQueueUrl', 'ListDeadLetterSourceQueues', 'PurgeQueue', 'ListQueueTags', '*'];
const AS_SINGLE: Record<string, string> = {
  SendMessageBatch: 'SendMessage',
  DeleteMessageBatch: 'DeleteMessage',
  ChangeMessageVisibilityBatch: 'ChangeMessageVisibility',
};

const list = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

function readPolicy(queue: QueueRecord): Policy {
  try {
    return queue.attributes.Policy ? (JSON.parse(queue.attributes.Policy) as Policy) : {};
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
  const statements = list(readPolicy(queue).Statement);
  const hits = statements.filter((s) => matches(s, accountId, wanted, arn));
  if (hits.some((s) => s.Effect === 'Deny')) return false;
  return hits.some((s) => s.Effect === 'Allow' && s.Condition === undefined);
}

export function accessDenied(engine: Engine, ctx: RequestContext, queue: QueueRecord) {
  return sqsError('AccessDenied', `Access to the resource ${engine.urlOf(ctx, queue)} is denied.`);
}

const LABEL = /^[A-Za-z0-9_-]{1,80}$/;

function stringList(v: unknown, name: string): string[] {
  if (v === undefined || v === null) throw errors.missingParameter(name);
  if (!Array.isArray(v) || v.length === 0 || v.some((x) => typeof x !== 'string')) {
    throw errors.invalidParameterValue(`The request must contain a non-empty list for the parameter ${name}.`);
  }
  return v as string[];
}

function checkLabel(label: unknown): string {
  if (label === undefined || label === null || label === '') throw errors.missingParameter('Label');
  if (typeof label !== 'string' || !LABEL.test(label)) {
    throw errors.invalidValue('Label', label, 'Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length.');
  }
  return label;
}

async function savePolicy(engine: Engine, queue: QueueRecord, statements: Statement[]) {
  const now = engine.clock.now();
  if (statements.length === 0) {
    await engine.store.updateQueue(queue.id, { removeAttributes: ['Policy'], modifiedAt: now });
    return;
  }
  const arn = engine.arnOf(queue);
  const policy: Policy = { Version: '2012-10-17', Id: `${arn}/SQSDefaultPolicy`, Statement: statements };
  await engine.store.updateQueue(queue.id, { setAttributes: { Policy: JSON.stringify(policy) }, modifiedAt: now });
}

export async function addPermission(engine: Engine, ctx: RequestContext, input: Record<string, unknown>) {
  const queue = await engine.resolveQueue(ctx, input.QueueUrl);
  const label = checkLabel(input.Label);
  const accounts = stringList(input.AWSAccountIds, 'AWSAccountIds');
  const actions = stringList(input.Actions, 'Actions');
  for (const a of accounts) if (!/^\d{12}$/.test(a)) throw errors.invalidValue('AWSAccountIds', a, 'Must be a 12-digit AWS account id.');
  for (const a of actions) if (!GRANTABLE.includes(a)) throw errors.invalidValue('Actions', a, 'Please refer to the appropriate WSDL for a list of valid actions.');
  const statements = list(readPolicy(queue).Statement);
  if (statements.some((s) => s.Sid === label)) throw errors.invalidValue('Label', label, 'Already exists.');
  const principals = accounts.map((a) => `arn:aws:iam::${a}:root`);
  const sqsActions = actions.map((a) => `SQS:${a}`);
  statements.push({
    Sid: label, Effect: 'Allow',
    Principal: { AWS: principals.length === 1 ? principals[0]! : principals },
    Action: sqsActions.length === 1 ? sqsActions[0]! : sqsActions,
    Resource: engine.arnOf(queue),
  });
  await savePolicy(engine, queue, statements);
  return {};
}

export async function removePermission(engine: Engine, ctx: RequestContext, input: Record<string, unknown>) {
  const queue = await engine.resolveQueue(ctx, input.QueueUrl);
  const label = checkLabel(input.Label);
  const statements = list(readPolicy(queue).Statement);
  const kept = statements.filter((s) => s.Sid !== label);
  if (kept.length === statements.length) throw errors.invalidValue('Label', label, "can't find label.");
  await savePolicy(engine, queue, kept);
  return {};
}

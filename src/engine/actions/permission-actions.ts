import { GRANTABLE, list, readAccessPolicy, type AccessPolicy, type Statement } from '../queues/access-policy.js';
import type { ActionEngine } from './action-engine.js';
import type { ActionInputs } from './action-inputs.js';
import { errors, sqsError } from '../kernel/errors.js';
import type { QueueRecord, RequestContext } from '../kernel/types.js';
import { resolveQueue } from '../queues/queue-lookup.js';

/** AddPermission and RemovePermission: edit the statements of a queue's access policy. */
const LABEL = /^[A-Za-z0-9_-]{1,80}$/;
/** SQS's limit on the actions one AddPermission grants. */
const MAX_ACTIONS = 7;
/** Actions that exist but only the owner may call: SQS gives them their own reason. */
const OWNER_ONLY = [
  'AddPermission',
  'RemovePermission',
  'CreateQueue',
  'DeleteQueue',
  'SetQueueAttributes',
  'TagQueue',
  'UntagQueue',
];

function actionNameError(action: string) {
  const reason = OWNER_ONLY.includes(action)
    ? 'Only the queue owner is allowed to invoke this action.'
    : 'Please refer to the appropriate WSDL for a list of valid actions.';
  return errors.invalidValue('ActionName', `SQS:${action}`, reason);
}

/** A list of strings; an empty one is as missing as none (the Query protocol cannot tell them apart). */
function stringList(v: unknown, name: string): string[] {
  if (v === undefined || v === null || (Array.isArray(v) && v.length === 0)) throw errors.missingParameter(name);
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) {
    throw errors.invalidParameterValue(`The request must contain a non-empty list for the parameter ${name}.`);
  }
  return v as string[];
}

function checkLabel(label: unknown): string {
  if (label === undefined || label === null || label === '') throw errors.missingParameter('Label');
  if (typeof label !== 'string' || !LABEL.test(label)) {
    throw errors.invalidValue(
      'Label',
      label,
      'Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length.',
    );
  }
  return label;
}

async function savePolicy(engine: ActionEngine, queue: QueueRecord, statements: Statement[]) {
  const now = engine.clock.now();
  if (statements.length === 0) {
    await engine.store.queues.update(queue.id, { removeAttributes: ['Policy'], modifiedAt: now });
    return;
  }
  const arn = engine.arnOf(queue);
  const policy: AccessPolicy = { Version: '2008-10-17', Id: `${arn}/SQSDefaultPolicy`, Statement: statements };
  await engine.store.queues.update(queue.id, { setAttributes: { Policy: JSON.stringify(policy) }, modifiedAt: now });
}

export async function addPermission(engine: ActionEngine, ctx: RequestContext, input: ActionInputs['AddPermission']) {
  const queue = await resolveQueue(engine, ctx, input.QueueUrl);
  const label = checkLabel(input.Label);
  const actions = stringList(input.Actions, 'Actions');
  // SQS checks the accounts after the actions, as principals: no account at all cannot be verified.
  const none = input.AWSAccountIds;
  if (none === undefined || none === null || (Array.isArray(none) && none.length === 0))
    throw errors.invalidValue('PrincipalId', '[]', 'Unable to verify.');
  const accounts = stringList(input.AWSAccountIds, 'AWSAccountIds');
  for (const a of accounts)
    if (!/^\d{12}$/.test(a)) throw errors.invalidValue('AWSAccountIds', a, 'Must be a 12-digit AWS account id.');
  if (actions.length > MAX_ACTIONS)
    throw sqsError('OverLimit', `${actions.length} Actions were found, maximum allowed is ${MAX_ACTIONS}.`);
  for (const a of actions) if (!GRANTABLE.includes(a)) throw actionNameError(a);
  const statements = list(readAccessPolicy(queue).Statement);
  if (statements.some((s) => s.Sid === label)) throw errors.invalidValue('Label', label, 'Already exists.');
  const principals = accounts.map((a) => `arn:aws:iam::${a}:root`);
  const sqsActions = actions.map((a) => `SQS:${a}`);
  statements.push({
    Sid: label,
    Effect: 'Allow',
    Principal: { AWS: principals.length === 1 ? principals[0]! : principals },
    Action: sqsActions.length === 1 ? sqsActions[0]! : sqsActions,
    Resource: engine.arnOf(queue),
  });
  await savePolicy(engine, queue, statements);
  return {};
}

export async function removePermission(
  engine: ActionEngine,
  ctx: RequestContext,
  input: ActionInputs['RemovePermission'],
) {
  const queue = await resolveQueue(engine, ctx, input.QueueUrl);
  const label = checkLabel(input.Label);
  const statements = list(readAccessPolicy(queue).Statement);
  const kept = statements.filter((s) => s.Sid !== label);
  if (kept.length === statements.length) throw errors.invalidValue('Label', label, "can't find label.");
  await savePolicy(engine, queue, kept);
  return {};
}

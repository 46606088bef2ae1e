import type { ActionEngine } from './action-engine.js';
import type { ActionInputs } from './action-inputs.js';
import { errors, sqsError } from '../kernel/errors.js';
import {
  applySseRules,
  defaultAttributes,
  FAIR_QUEUE_ATTRIBUTES,
  isKnownAttribute,
  parseAttributes,
  READ_ONLY,
  SETTABLE,
} from '../queues/queue-attributes.js';
import { checkFifoAttributes, DEDUP_QUEUE_WIDE, dedupScopeChange } from '../messages/fifo.js';
import { checkRedriveAttributes } from '../dead-letters/redrive-policy.js';
import {
  APPLIED_POLICY_ATTRIBUTE,
  MAX_LENGTH_ATTRIBUTE,
  MAX_LENGTH_BYTES_ATTRIBUTE,
  OVERFLOW_ATTRIBUTE,
  TTL_ATTRIBUTE,
} from '../policies/dead-letter-settings.js';
import type { QueueRecord, RequestContext } from '../kernel/types.js';
import { checkQueueName, hasForbiddenCharacters, intParam, requireString } from '../queues/validation.js';
import { newQueue } from '../store/queues.js';
import { messageCounts } from '../store/messages.js';
import { checkAccess, resolveQueue, urlOf } from '../queues/queue-lookup.js';

const stringMap = (v: unknown, name: string): Record<string, string> | undefined => {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v))
    throw errors.invalidParameterValue(`The parameter ${name} must be a map.`);
  return v as Record<string, string>;
};

const stringList = (v: unknown, name: string): string[] | undefined => {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) {
    throw errors.invalidParameterValue(`The parameter ${name} must be a list of strings.`);
  }
  return v as string[];
};

const FIFO_NAME_RULE =
  'The name of a FIFO queue can only include alphanumeric characters, hyphens, or underscores, must end with .fifo suffix and be 1 to 80 in length.';

/** The model names CreateQueue's tags `tags`; `Tags`, TagQueue's name for them, is read too. */
export async function createQueue(
  engine: ActionEngine,
  ctx: RequestContext,
  input: ActionInputs['CreateQueue'] & { Tags?: unknown },
) {
  const name = checkQueueName(input.QueueName);
  const given = stringMap(input.Attributes, 'Attributes') ?? {};
  const tags = stringMap(input.tags ?? input.Tags, 'Tags') ?? {};
  const fifo = given.FifoQueue !== undefined && String(given.FifoQueue).toLowerCase() === 'true';
  if (fifo !== name.endsWith('.fifo')) throw errors.invalidParameterValue(FIFO_NAME_RULE);
  if (given.FifoQueue !== undefined && !fifo) {
    throw sqsError('InvalidAttributeName', 'Unknown Attribute FifoQueue.');
  }
  const attributes = parseAttributes(given, fifo, 'create');
  const sse = applySseRules(attributes, {});
  checkTags(tags);
  if (fifo) checkFifoAttributes({ ...defaultAttributes(true), ...attributes });
  await checkRedriveAttributes(engine, ctx, { accountId: ctx.accountId, region: ctx.region, name, fifo }, attributes);
  const now = engine.clock.now();
  const { queue, created } = await engine.createWithinQuota(
    newQueue(
      {
        accountId: ctx.accountId,
        region: ctx.region,
        name,
        fifo,
        attributes: { ...defaultAttributes(fifo), ...sse.set },
        tags,
      },
      now,
    ),
  );
  if (created) {
    engine.log.info(
      { queue: name, account: ctx.accountId, region: ctx.region, fifo, attributes: Object.keys(attributes) },
      'queue created',
    );
  } else {
    for (const [k, v] of Object.entries(attributes)) {
      const current = queue.attributes[k] ?? SETTABLE[k]?.default;
      if (current !== v) {
        throw sqsError(
          'QueueNameExists',
          `A queue already exists with the same name and a different value for attribute ${k}`,
        );
      }
    }
  }
  return { QueueUrl: urlOf(engine, ctx, queue) };
}

export async function getQueueUrl(engine: ActionEngine, ctx: RequestContext, input: ActionInputs['GetQueueUrl']) {
  const name = requireString(input.QueueName, 'QueueName');
  const owner = input.QueueOwnerAWSAccountId === undefined ? ctx.accountId : String(input.QueueOwnerAWSAccountId);
  const queue = await engine.store.queues.get({ accountId: owner, region: ctx.region, name });
  if (!queue) throw errors.queueDoesNotExist();
  checkAccess(engine, ctx, queue);
  return { QueueUrl: urlOf(engine, ctx, queue) };
}

export async function listQueues(engine: ActionEngine, ctx: RequestContext, input: ActionInputs['ListQueues']) {
  const prefix = input.QueueNamePrefix === undefined ? '' : String(input.QueueNamePrefix);
  const max = intParam(input.MaxResults, 'MaxResults', 1, 1000);
  const after = decodeToken(input.NextToken);
  const limit = max ?? 1000;
  const rows = await engine.store.queues.list(ctx, prefix, after, limit + 1);
  const page = rows.slice(0, limit);
  const out: Record<string, unknown> = {};
  if (page.length) out.QueueUrls = page.map((q) => urlOf(engine, ctx, q));
  // SQS pages only when MaxResults is given.
  if (max !== undefined && rows.length > limit) out.NextToken = encodeToken(page[page.length - 1]!.name);
  return out;
}

export function encodeToken(after: string): string {
  return Buffer.from(JSON.stringify({ after })).toString('base64');
}

export function decodeToken(token: unknown): string | undefined {
  if (token === undefined || token === null || token === '') return undefined;
  try {
    const parsed = JSON.parse(Buffer.from(String(token), 'base64').toString('utf8')) as { after?: unknown };
    if (typeof parsed.after === 'string') return parsed.after;
  } catch {
    // fall through
  }
  throw errors.invalidParameterValue('Invalid NextToken value.');
}

export async function deleteQueue(engine: ActionEngine, ctx: RequestContext, input: ActionInputs['DeleteQueue']) {
  const queue = await resolveQueue(engine, ctx, input.QueueUrl);
  if (await engine.store.queues.delete(queue.id)) engine.queueQuota.give(queue.accountId);
  engine.fair.forget(queue.id);
  engine.queueDeleted(queue.id);
  engine.log.info({ queue: queue.name, account: queue.accountId, by: ctx.accountId }, 'queue deleted');
  return {};
}

export async function purgeQueue(engine: ActionEngine, ctx: RequestContext, input: ActionInputs['PurgeQueue']) {
  const queue = await resolveQueue(engine, ctx, input.QueueUrl);
  const ok = await engine.store.queues.purge(queue.id, engine.clock.now(), 60_000);
  if (!ok) {
    throw sqsError(
      'PurgeQueueInProgress',
      `Only one PurgeQueue operation on ${queue.name} is allowed every 60 seconds.`,
    );
  }
  engine.log.info({ queue: queue.name, account: queue.accountId, by: ctx.accountId }, 'queue purged');
  return {};
}

export async function getQueueAttributes(
  engine: ActionEngine,
  ctx: RequestContext,
  input: ActionInputs['GetQueueAttributes'],
) {
  const queue = await resolveQueue(engine, ctx, input.QueueUrl);
  const names = stringList(input.AttributeNames, 'AttributeNames') ?? [];
  for (const n of names) {
    if (n !== 'All' && !isKnownAttribute(n)) throw sqsError('InvalidAttributeName', `Unknown Attribute ${n}.`);
  }
  const all = await queueAttributes(engine, queue, names);
  const wanted = names.includes('All') ? Object.keys(all) : names;
  const Attributes: Record<string, string> = {};
  for (const n of wanted) if (all[n] !== undefined) Attributes[n] = all[n]!;
  return Object.keys(Attributes).length ? { Attributes } : {};
}

async function queueAttributes(
  engine: ActionEngine,
  queue: QueueRecord,
  names: string[],
): Promise<Record<string, string>> {
  const out: Record<string, string> = { ...queue.attributes };
  delete out[DEDUP_QUEUE_WIDE];
  const needsCounts = names.includes('All') || names.some((n) => n.startsWith('ApproximateNumber'));
  if (needsCounts) {
    const c = await messageCounts(engine.store.messages, queue.id, engine.clock.now());
    out.ApproximateNumberOfMessages = String(c.visible);
    out.ApproximateNumberOfMessagesNotVisible = String(c.inflight);
    out.ApproximateNumberOfMessagesDelayed = String(c.delayed);
  }
  if (names.some((n) => (FAIR_QUEUE_ATTRIBUTES as readonly string[]).includes(n)))
    Object.assign(out, await engine.fair.attributes(queue, engine.clock.now()));
  out.CreatedTimestamp = String(Math.floor(queue.createdAt / 1000));
  out.LastModifiedTimestamp = String(Math.floor(queue.modifiedAt / 1000));
  out.QueueArn = engine.arnOf(queue);
  Object.assign(out, policyAttributes(engine, queue));
  return out;
}

/**
 * The settings a dead-letter policy gives the queue, under their attribute names, and
 * which policy that is with what it contributes. Attributes set on the queue are not
 * shown here: they override the policy.
 */
function policyAttributes(engine: ActionEngine, queue: QueueRecord): Record<string, string> {
  const policy = engine.settingsOf(queue).policy;
  if (!policy) return {};
  const d = policy.applied;
  const out: Record<string, string> = { [APPLIED_POLICY_ATTRIBUTE]: JSON.stringify(policy) };
  if (d.messageTtlSeconds !== undefined) out[TTL_ATTRIBUTE] = String(d.messageTtlSeconds);
  if (d.maxLength !== undefined) out[MAX_LENGTH_ATTRIBUTE] = String(d.maxLength);
  if (d.maxLengthBytes !== undefined) out[MAX_LENGTH_BYTES_ATTRIBUTE] = String(d.maxLengthBytes);
  if (d.overflow !== undefined) out[OVERFLOW_ATTRIBUTE] = d.overflow;
  return out;
}

export async function setQueueAttributes(
  engine: ActionEngine,
  ctx: RequestContext,
  input: ActionInputs['SetQueueAttributes'],
) {
  const queue = await resolveQueue(engine, ctx, input.QueueUrl);
  const given = stringMap(input.Attributes, 'Attributes');
  if (!given) throw errors.missingParameter('Attributes');
  if (queue.fifo && given.FifoQueue !== undefined) {
    if (String(given.FifoQueue).toLowerCase() !== 'true') {
      throw errors.invalidAttributeValue(
        'Invalid value for the parameter FifoQueue. Reason: Modifying queue type is not supported.',
      );
    }
    delete given.FifoQueue;
  }
  for (const n of Object.keys(given)) {
    if ((READ_ONLY as readonly string[]).includes(n)) throw sqsError('InvalidAttributeName', `Unknown Attribute ${n}.`);
  }
  const parsed = parseAttributes(given, queue.fifo, 'set');
  const { set: attributes, remove } = applySseRules(parsed, queue.attributes);
  if (queue.fifo) checkFifoAttributes({ ...queue.attributes, ...attributes });
  await checkRedriveAttributes(engine, ctx, queue, attributes);
  // An empty Policy or RedrivePolicy removes it, as in SQS.
  const emptied = Object.keys(attributes).filter((k) => attributes[k] === '' && SETTABLE[k]?.default === undefined);
  for (const k of emptied) delete attributes[k];
  const removeAttributes = [...remove, ...emptied];
  const setAttributes = { ...attributes, ...dedupScopeChange(queue, attributes) };
  await engine.store.queues.update(queue.id, { setAttributes, removeAttributes, modifiedAt: engine.clock.now() });
  engine.log.info(
    {
      queue: queue.name,
      account: queue.accountId,
      by: ctx.accountId,
      set: Object.keys(attributes),
      removed: removeAttributes,
    },
    'queue attributes changed',
  );
  return {};
}

function checkTags(tags: Record<string, string>): void {
  const keys = Object.keys(tags);
  if (keys.length > 50) throw errors.invalidParameterValue('Too many tags added for queue. The maximum is 50.');
  for (const k of keys) {
    const v = tags[k];
    if (
      k.length === 0 ||
      k.length > 128 ||
      typeof v !== 'string' ||
      v.length > 256 ||
      hasForbiddenCharacters(k) ||
      hasForbiddenCharacters(v)
    ) {
      throw errors.invalidParameterValue(`Tag key or value is invalid: ${k}.`);
    }
  }
}

export async function tagQueue(engine: ActionEngine, ctx: RequestContext, input: ActionInputs['TagQueue']) {
  const queue = await resolveQueue(engine, ctx, input.QueueUrl);
  const tags = stringMap(input.Tags, 'Tags');
  // SQS treats an empty map as a missing one.
  if (!tags || Object.keys(tags).length === 0) throw errors.missingParameter('Tags');
  checkTags({ ...queue.tags, ...tags });
  await engine.store.queues.update(queue.id, { setTags: tags });
  return {};
}

export async function untagQueue(engine: ActionEngine, ctx: RequestContext, input: ActionInputs['UntagQueue']) {
  const queue = await resolveQueue(engine, ctx, input.QueueUrl);
  const keys = stringList(input.TagKeys, 'TagKeys');
  if (!keys) throw errors.missingParameter('TagKeys');
  // SQS checks each key's length, and reads an empty list as one empty key.
  if (keys.length === 0 || keys.some((k) => k.length === 0 || k.length > 128)) {
    throw errors.invalidParameterValue('Tag keys must be between 1 and 128 characters in length.');
  }
  await engine.store.queues.update(queue.id, { removeTags: keys });
  return {};
}

export async function listQueueTags(engine: ActionEngine, ctx: RequestContext, input: ActionInputs['ListQueueTags']) {
  const queue = await resolveQueue(engine, ctx, input.QueueUrl);
  return Object.keys(queue.tags).length ? { Tags: queue.tags } : {};
}

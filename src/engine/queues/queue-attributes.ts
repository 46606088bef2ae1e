import { APPLIED_POLICY_ATTRIBUTE } from '../policies/dead-letter-settings.js';
import { DEAD_LETTER_SETTINGS, type SettingValue } from '../policies/setting-spellings.js';
import { errors, sqsError } from '../kernel/errors.js';
import type { QueueRecord } from '../kernel/types.js';
import { hasForbiddenCharacters } from './validation.js';

/** Settable queue attributes: their defaults and how a value is checked and normalised. */
interface AttributeSpec {
  default?: string;
  fifoOnly?: boolean;
  /** Only at creation: a later SetQueueAttributes may not change it. */
  createOnly?: boolean;
  /** Returns the canonical string, or throws. */
  parse(value: string, name: string): string;
}

const invalid = (name: string) => errors.invalidAttributeValue(`Invalid value for the parameter ${name}.`);

function intRange(min: number, max: number): AttributeSpec['parse'] {
  return (value, name) => {
    if (!/^-?\d+$/.test(value.trim())) throw invalid(name);
    const n = Number(value);
    if (n < min || n > max) throw invalid(name);
    return String(n);
  };
}

function bool(value: string, name: string): string {
  const v = value.toLowerCase();
  if (v !== 'true' && v !== 'false') throw invalid(name);
  return v;
}

function oneOf(...allowed: string[]): AttributeSpec['parse'] {
  return (value, name) => {
    if (!allowed.includes(value)) throw invalid(name);
    return value;
  };
}

function jsonText(value: string, name: string): string {
  // An empty value removes the attribute (SetQueueAttributes Policy="").
  if (value === '') return value;
  try {
    JSON.parse(value);
  } catch {
    throw invalid(name);
  }
  return value;
}

const text: AttributeSpec['parse'] = (value) => value;

/** An extension attribute: empty removes it, as for Policy. */
const optional =
  (parse: AttributeSpec['parse']): AttributeSpec['parse'] =>
  (value, name) =>
    value === '' ? '' : parse(value, name);

/**
 * A dead-letter setting's attribute (setting-spellings.ts). Empty removes a number or an
 * overflow; an empty exchange name is the default exchange.
 */
function settingParse(value: SettingValue): AttributeSpec['parse'] {
  if (value.type === 'string') return text;
  return optional(value.type === 'int' ? intRange(value.min, value.max) : oneOf(...value.values));
}

const MAX_MESSAGE_BYTES = 1_048_576;

export const SETTABLE: Record<string, AttributeSpec> = {
  DelaySeconds: { default: '0', parse: intRange(0, 900) },
  MaximumMessageSize: { default: String(MAX_MESSAGE_BYTES), parse: intRange(1024, MAX_MESSAGE_BYTES) },
  MessageRetentionPeriod: { default: '345600', parse: intRange(60, 1_209_600) },
  ReceiveMessageWaitTimeSeconds: { default: '0', parse: intRange(0, 20) },
  VisibilityTimeout: { default: '30', parse: intRange(0, 43_200) },
  Policy: { parse: jsonText },
  // Checked in full, with SQS's messages, by redrive-policy.ts.
  RedrivePolicy: { parse: text },
  RedriveAllowPolicy: { parse: text },
  KmsMasterKeyId: { parse: text },
  KmsDataKeyReusePeriodSeconds: { parse: intRange(60, 86_400) },
  SqsManagedSseEnabled: { default: 'true', parse: bool },
  FifoQueue: { fifoOnly: true, createOnly: true, parse: bool },
  ContentBasedDeduplication: { fifoOnly: true, default: 'false', parse: bool },
  DeduplicationScope: { fifoOnly: true, default: 'queue', parse: oneOf('messageGroup', 'queue') },
  FifoThroughputLimit: { fifoOnly: true, default: 'perQueue', parse: oneOf('perQueue', 'perMessageGroupId') },
  // Redrive extensions (docs/extensions.md). They have no defaults, so a queue that does
  // not set them returns none of them and a matching policy may supply them.
  ...Object.fromEntries(DEAD_LETTER_SETTINGS.map((s) => [s.attribute, { parse: settingParse(s.value) }])),
};

/** Computed attributes, returned by GetQueueAttributes but never settable. */
export const READ_ONLY = [
  'ApproximateNumberOfMessages',
  'ApproximateNumberOfMessagesNotVisible',
  'ApproximateNumberOfMessagesDelayed',
  'CreatedTimestamp',
  'LastModifiedTimestamp',
  'QueueArn',
  APPLIED_POLICY_ATTRIBUTE,
] as const;

/**
 * Fair queues: the CloudWatch metrics SQS publishes for them (docs/fair-queues.md), here
 * as read-only attributes under the same names. Returned only when named: `All` keeps
 * SQS's list.
 */
export const FAIR_QUEUE_ATTRIBUTES = [
  'ApproximateNumberOfNoisyGroups',
  'ApproximateNumberOfMessagesVisibleInQuietGroups',
  'ApproximateNumberOfMessagesNotVisibleInQuietGroups',
  'ApproximateNumberOfMessagesDelayedInQuietGroups',
  'ApproximateAgeOfOldestMessageInQuietGroups',
] as const;

export function isKnownAttribute(name: string): boolean {
  return (
    Object.hasOwn(SETTABLE, name) ||
    (READ_ONLY as readonly string[]).includes(name) ||
    (FAIR_QUEUE_ATTRIBUTES as readonly string[]).includes(name)
  );
}

/**
 * Validates and normalises attributes given to CreateQueue or SetQueueAttributes.
 * Nothing is applied by the caller until every attribute has passed.
 */
export function parseAttributes(
  given: Record<string, string> | undefined,
  fifo: boolean,
  mode: 'create' | 'set',
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, raw] of Object.entries(given ?? {})) {
    // hasOwn: a name such as `toString` is not an attribute.
    const spec = Object.hasOwn(SETTABLE, name) ? SETTABLE[name] : undefined;
    if (!spec) throw sqsError('InvalidAttributeName', `Unknown Attribute ${name}.`);
    if (spec.fifoOnly && !fifo && name !== 'FifoQueue') {
      // SQS's own words for these two; other FIFO attributes are unknown to a standard queue.
      if (name === 'DeduplicationScope' || name === 'FifoThroughputLimit') {
        throw sqsError('InvalidAttributeName', `You can specify the ${name} only when FifoQueue is set to true.`);
      }
      throw sqsError('InvalidAttributeName', `Unknown Attribute ${name}.`);
    }
    // A value is stored as given or refused: never one that holds characters SQS refuses.
    if (typeof raw !== 'string' || hasForbiddenCharacters(raw)) throw invalid(name);
    if (mode === 'set' && spec.createOnly) {
      throw sqsError('InvalidAttributeName', `Unknown Attribute ${name}.`);
    }
    out[name] = spec.parse(raw, name);
  }
  return out;
}

const KMS_ATTRIBUTES = ['KmsMasterKeyId', 'KmsDataKeyReusePeriodSeconds'];

/**
 * SSE-KMS and SSE-SQS exclude each other: asking for both is an error, and turning one
 * on turns the other off. Returns the attributes to set (with what follows from them)
 * and the attributes to remove, given the queue's `current` ones.
 */
export function applySseRules(
  attributes: Record<string, string>,
  current: Record<string, string>,
): { set: Record<string, string>; remove: string[] } {
  const kms = attributes.KmsMasterKeyId !== undefined && attributes.KmsMasterKeyId !== '';
  // An empty KmsMasterKeyId turns SSE-KMS off: its data key reuse period goes with it.
  if (attributes.KmsMasterKeyId === '') {
    const set = { ...attributes };
    delete set.KmsDataKeyReusePeriodSeconds;
    return { set, remove: ['KmsDataKeyReusePeriodSeconds'] };
  }
  if (kms && attributes.SqsManagedSseEnabled === 'true') {
    throw sqsError(
      'InvalidAttributeName',
      'You can use one type of server-side encryption (SSE) at one time. You can either enable KMS SSE or SQS SSE.',
    );
  }
  if (kms) {
    const reuse = current.KmsDataKeyReusePeriodSeconds ?? '300';
    return { set: { SqsManagedSseEnabled: 'false', KmsDataKeyReusePeriodSeconds: reuse, ...attributes }, remove: [] };
  }
  if (attributes.SqsManagedSseEnabled === 'true') {
    const set = { ...attributes };
    for (const k of KMS_ATTRIBUTES) delete set[k];
    return { set, remove: KMS_ATTRIBUTES };
  }
  return { set: attributes, remove: [] };
}

/** Settable attributes with defaults filled in, as a new queue of this type has them. */
export function defaultAttributes(fifo: boolean): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, spec] of Object.entries(SETTABLE)) {
    if (spec.default === undefined || (spec.fifoOnly && !fifo)) continue;
    out[name] = spec.default;
  }
  if (fifo) out.FifoQueue = 'true';
  return out;
}

export function queueNumber(queue: QueueRecord, name: string): number {
  return Number(queue.attributes[name] ?? SETTABLE[name]?.default ?? 0);
}

/** How long the queue keeps a message (MessageRetentionPeriod), in milliseconds. */
export function retentionMs(q: QueueRecord): number {
  return queueNumber(q, 'MessageRetentionPeriod') * 1000;
}

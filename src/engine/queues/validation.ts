import { MESSAGE_TTL_ATTRIBUTE } from '../policies/dead-letter-settings.js';
import { AMQP_ATTRIBUTE, RESTORE_ATTRIBUTES } from '../kernel/attribute-names.js';
import { errors, sqsError } from '../kernel/errors.js';
import type { MessageAttributes, MessageAttributeValue } from '../kernel/types.js';

// SQS's allowed set: #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF.
// With the u flag a lone surrogate is its own code point, so it is caught too.
const FORBIDDEN_CHAR = /[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

export function hasForbiddenCharacters(s: string): boolean {
  return FORBIDDEN_CHAR.test(s);
}

export function checkBody(body: unknown): string {
  if (body === undefined || body === null) throw errors.missingParameter('MessageBody');
  if (typeof body !== 'string') throw errors.invalidParameterValue('The parameter MessageBody must be a string.');
  // SQS treats an empty body as a missing one.
  if (body.length === 0) throw errors.missingParameter('MessageBody');
  if (hasForbiddenCharacters(body)) {
    throw sqsError(
      'InvalidMessageContents',
      'Invalid characters found. Valid unicode characters are #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF',
    );
  }
  return body;
}

/** A stored message's size as SQS counts it against MaximumMessageSize: body and user attributes. */
export function messageSize(m: { body: string; attributes?: MessageAttributes }): number {
  return Buffer.byteLength(m.body, 'utf8') + checkMessageAttributes(m.attributes).size;
}

// "Alphanumeric" in SQS includes letters beyond ASCII: `attr.1øßä` is a valid name.
const ATTRIBUTE_NAME = /^[\p{L}\p{N}_\-.]{1,256}$/u;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const DATA_TYPE = /^(String|Number|Binary)(\..+)?$/;

/**
 * Validates message attributes. Returns their size in bytes as SQS counts it, and a clean
 * copy that keeps only the value its DataType uses (undefined when there are none).
 */
export function checkMessageAttributes(
  attrs: unknown,
  kind: 'message' | 'system' = 'message',
): { size: number; attributes?: MessageAttributes } {
  if (attrs === undefined || attrs === null) return { size: 0 };
  if (typeof attrs !== 'object' || Array.isArray(attrs)) {
    throw errors.invalidParameterValue('The message attributes must be a map.');
  }
  const entries = Object.entries(attrs as MessageAttributes);
  if (entries.length > 10) {
    throw errors.invalidParameterValue(
      `Number of message attributes [${entries.length}] exceeds the allowed maximum [10].`,
    );
  }
  let size = 0;
  const clean: [string, MessageAttributeValue][] = [];
  for (const [name, value] of entries) {
    if (kind === 'system') {
      if (
        name !== 'AWSTraceHeader' &&
        name !== MESSAGE_TTL_ATTRIBUTE &&
        name !== AMQP_ATTRIBUTE &&
        !RESTORE_ATTRIBUTES.includes(name)
      ) {
        throw errors.invalidParameterValue(`Message system attribute name '${name}' is invalid.`);
      }
    } else {
      checkAttributeName(name);
    }
    if (!value || typeof value !== 'object') {
      throw errors.invalidParameterValue(
        `The message attribute '${name}' must contain a non-empty message attribute value.`,
      );
    }
    const type = value.DataType;
    if (typeof type !== 'string' || type.length === 0) {
      throw errors.invalidParameterValue(
        `The message attribute '${name}' must contain a non-empty message attribute type.`,
      );
    }
    if (!DATA_TYPE.test(type) || type.length > 256 || hasForbiddenCharacters(type)) {
      throw errors.invalidParameterValue(
        `The type of message (user) attribute '${name}' is invalid. You must use only the following supported type prefixes: Binary, Number, String.`,
      );
    }
    const base = type.split('.')[0];
    if (base === 'Binary') {
      if (typeof value.BinaryValue !== 'string' || value.BinaryValue.length === 0) {
        throw errors.invalidParameterValue(
          `Message (user) attribute '${name}' must contain a non-empty value of type 'Binary'.`,
        );
      }
      // Both wire protocols carry blobs as base64; anything else cannot be a blob.
      if (!BASE64.test(value.BinaryValue)) {
        throw errors.invalidParameterValue(`Message (user) attribute '${name}' has an invalid binary value.`);
      }
      size += Buffer.byteLength(value.BinaryValue, 'base64');
      clean.push([name, { DataType: type, BinaryValue: value.BinaryValue }]);
    } else {
      const v = value.StringValue;
      if (typeof v !== 'string' || v.length === 0) {
        throw errors.invalidParameterValue(
          `Message (user) attribute '${name}' must contain a non-empty value of type '${base}'.`,
        );
      }
      if (base === 'Number') checkNumberAttribute(name, v);
      // SQS answers InvalidParameterValue here, not InvalidMessageContents as for a body.
      if (hasForbiddenCharacters(v)) {
        throw errors.invalidParameterValue(`Message (user) attribute '${name}' contains invalid characters.`);
      }
      size += Buffer.byteLength(v, 'utf8');
      clean.push([name, { DataType: type, StringValue: v }]);
    }
    size += Buffer.byteLength(name, 'utf8') + Buffer.byteLength(type, 'utf8');
  }
  // fromEntries keeps a name such as `__proto__` an ordinary key.
  return { size, attributes: clean.length ? Object.fromEntries(clean) : undefined };
}

function checkAttributeName(name: string): void {
  const lower = name.toLowerCase();
  if (
    !ATTRIBUTE_NAME.test(name) ||
    name.startsWith('.') ||
    name.endsWith('.') ||
    name.includes('..') ||
    lower.startsWith('aws.') ||
    lower.startsWith('amazon.')
  ) {
    throw errors.invalidParameterValue(`Message (user) attribute name '${name}' is invalid.`);
  }
}

function checkNumberAttribute(name: string, v: string): void {
  const n = Number(v.trim());
  const digits = v.replace(/[^0-9]/g, '').replace(/^0+/, '');
  if (
    !/^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/.test(v) ||
    !Number.isFinite(n) ||
    digits.length > 38 ||
    Math.abs(n) > 1e126 ||
    (n !== 0 && Math.abs(n) < 1e-128)
  ) {
    throw errors.invalidParameterValue(`Can't cast the value of message (user) attribute '${name}' to a number.`);
  }
}

const QUEUE_NAME = /^[A-Za-z0-9_-]{1,80}$/;

export function checkQueueName(name: unknown): string {
  if (name === undefined || name === null) throw errors.missingParameter('QueueName');
  if (typeof name !== 'string') throw errors.invalidParameterValue('The parameter QueueName must be a string.');
  const base = name.endsWith('.fifo') ? name.slice(0, -5) : name;
  if (!QUEUE_NAME.test(base) || name.length > 80) {
    throw errors.invalidParameterValue(
      'Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length',
    );
  }
  return name;
}

const BATCH_ID = /^[A-Za-z0-9_-]{1,80}$/;

/**
 * Checks the `Entries` of a batch action: not empty, at most 10, ids well formed and
 * distinct. `entryShape` names an entry in SQS's error text, e.g. SendMessageBatchRequestEntry.
 */
export function checkBatchEntries<T extends { Id?: unknown }>(
  entries: unknown,
  entryShape: string,
  param = 'Entries',
): T[] {
  if (entries === undefined || entries === null) throw errors.missingParameter(param);
  if (!Array.isArray(entries)) throw errors.invalidParameterValue(`The parameter ${param} must be a list.`);
  if (entries.length === 0) {
    throw sqsError('EmptyBatchRequest', `There should be at least one ${entryShape} in the request.`);
  }
  if (entries.length > 10) {
    throw sqsError(
      'TooManyEntriesInBatchRequest',
      `Maximum number of entries per request are 10. You have sent ${entries.length}.`,
    );
  }
  const seen = new Set<string>();
  for (const e of entries as T[]) {
    const id = e?.Id;
    if (typeof id !== 'string' || !BATCH_ID.test(id)) {
      throw sqsError(
        'InvalidBatchEntryId',
        'A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.',
      );
    }
    if (seen.has(id)) throw sqsError('BatchEntryIdsNotDistinct', `Id ${id} repeated.`);
    seen.add(id);
  }
  return entries as T[];
}

/** Reads an optional integer parameter and checks its range, with SQS's wording. */
export function intParam(
  value: unknown,
  name: string,
  min: number,
  max: number,
  reason = `Must be between ${min} and ${max}, if provided.`,
): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    throw errors.invalidValue(name, value, 'must be an integer.');
  }
  if (value < min || value > max) {
    throw errors.invalidValue(name, value, reason);
  }
  return value;
}

export function requireString(value: unknown, name: string): string {
  if (value === undefined || value === null || value === '') throw errors.missingParameter(name);
  if (typeof value !== 'string') throw errors.invalidParameterValue(`The parameter ${name} must be a string.`);
  return value;
}

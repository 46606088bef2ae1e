import {
  AMQP_ATTRIBUTE,
  DEATH_HISTORY_ATTRIBUTE,
  RESTORE_ATTRIBUTES,
  SOURCE_ARN_ATTRIBUTE,
} from '../kernel/attribute-names.js';
import { DEATH_REASONS, isDeathReason } from '../../wire/deaths.js';
import { parseQueueArn } from '../kernel/addressing.js';
import { errors } from '../kernel/errors.js';
import type { Death, DeathReason, MessageAttributes, QueueRecord, RequestContext } from '../kernel/types.js';

/**
 * Restoring a message's dead-letter history on send (an extension, docs/extensions.md):
 * what `redrive messages import` needs to replay an exported dead-letter queue with its
 * histories. Two message system attributes, both removed from the stored message:
 * - `RedriveDeathHistory`: the history as the export wrote it (a JSON array, newest first);
 * - `DeadLetterQueueSourceArn`: the queue it died in, so a redrive can return it there.
 */

/** One entry per {queue, reason}: 4 reasons over 25 queues is more than any real history holds. */
const MAX_ENTRIES = 100;
const MAX_TTL_SECONDS = 1_209_600;
const FIELDS = [
  'queue',
  'queueArn',
  'reason',
  'count',
  'firstTime',
  'lastTime',
  'rejectReason',
  'originalTtlSeconds',
  'exchange',
  'routingKeys',
  'originalExpiration',
];
/** x-death's routing keys: the message's key and its CC keys. */
const MAX_ROUTING_KEYS = 100;

export interface Restored {
  /** The system attributes without the two restore attributes (undefined when none are left). */
  systemAttributes?: MessageAttributes;
  deaths?: Death[];
  deadLetterSourceArn?: string;
}

const bad = (name: string, reason: string) =>
  errors.invalidParameterValue(`Message system attribute ${name} is invalid. Reason: ${reason}`);

function stringValue(a: MessageAttributes[string], name: string): string {
  if (!a.DataType.startsWith('String') || a.StringValue === undefined) throw bad(name, 'it must be of type String.');
  return a.StringValue;
}

/** Takes the restore attributes out of a send's system attributes, checked. */
export function restoredDeaths(system: MessageAttributes | undefined): Restored {
  if (!system || !RESTORE_ATTRIBUTES.some((n) => n in system)) return { systemAttributes: system };
  const rest = Object.fromEntries(Object.entries(system).filter(([n]) => !RESTORE_ATTRIBUTES.includes(n)));
  const out: Restored = { systemAttributes: Object.keys(rest).length ? rest : undefined };
  const history = system[DEATH_HISTORY_ATTRIBUTE];
  if (history) out.deaths = parseHistory(stringValue(history, DEATH_HISTORY_ATTRIBUTE));
  const source = system[SOURCE_ARN_ATTRIBUTE];
  if (source) {
    const arn = stringValue(source, SOURCE_ARN_ATTRIBUTE);
    if (!parseQueueArn(arn)) throw bad(SOURCE_ARN_ATTRIBUTE, 'it must be a queue ARN.');
    out.deadLetterSourceArn = arn;
  }
  return out;
}

function parseHistory(text: string): Death[] | undefined {
  const fail = (reason: string) => bad(DEATH_HISTORY_ATTRIBUTE, reason);
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw fail('it must be a JSON array of deaths.');
  }
  if (!Array.isArray(v)) throw fail('it must be a JSON array of deaths.');
  if (v.length > MAX_ENTRIES) throw fail(`it has ${v.length} entries; at most ${MAX_ENTRIES}.`);
  const seen = new Set<string>();
  const deaths = v.map((e: unknown, i): Death => {
    const at = `entry ${i}`;
    if (!e || typeof e !== 'object' || Array.isArray(e)) throw fail(`${at} must be an object.`);
    const d = e as Record<string, unknown>;
    const unknown = Object.keys(d).find((k) => !FIELDS.includes(k));
    if (unknown) throw fail(`${at} has an unknown field ${unknown}.`);
    const address = typeof d.queueArn === 'string' ? parseQueueArn(d.queueArn) : undefined;
    if (!address || d.queue !== address.name) throw fail(`${at} needs queueArn, a queue ARN, and queue, its name.`);
    if (!isDeathReason(d.reason)) throw fail(`${at}: reason must be one of ${DEATH_REASONS.join(', ')}.`);
    if (!isInt(d.count) || d.count < 1) throw fail(`${at}: count must be a whole number, 1 or more.`);
    if (!isInt(d.firstTime) || !isInt(d.lastTime) || d.firstTime < 0 || d.lastTime < d.firstTime) {
      throw fail(`${at}: firstTime and lastTime must be epoch milliseconds, firstTime first.`);
    }
    if (d.rejectReason !== undefined && (typeof d.rejectReason !== 'string' || d.rejectReason.length > 1024))
      throw fail(`${at}: rejectReason must be a string of at most 1024 characters.`);
    if (
      d.originalTtlSeconds !== undefined &&
      (!isInt(d.originalTtlSeconds) || d.originalTtlSeconds < 0 || d.originalTtlSeconds > MAX_TTL_SECONDS)
    ) {
      throw fail(`${at}: originalTtlSeconds must be 0 to ${MAX_TTL_SECONDS}.`);
    }
    checkAmqpFields(d, fail, at);
    const key = `${d.queueArn as string} ${d.reason as string}`;
    if (seen.has(key)) throw fail(`${at} repeats the queue and reason of an earlier entry.`);
    seen.add(key);
    const death: Death = {
      queue: d.queue,
      queueArn: d.queueArn as string,
      reason: d.reason as DeathReason,
      count: d.count,
      firstTime: d.firstTime,
      lastTime: d.lastTime,
    };
    if (d.rejectReason !== undefined) death.rejectReason = d.rejectReason as string;
    if (d.originalTtlSeconds !== undefined) death.originalTtlSeconds = d.originalTtlSeconds as number;
    if (d.exchange !== undefined) death.exchange = d.exchange as string;
    if (d.routingKeys !== undefined) death.routingKeys = d.routingKeys as string[];
    if (d.originalExpiration !== undefined) death.originalExpiration = d.originalExpiration as string;
    return death;
  });
  return deaths.length ? deaths : undefined;
}

/** The fields an AMQP death records (x-death's exchange, routing-keys and original-expiration): AMQP short strings. */
function checkAmqpFields(d: Record<string, unknown>, fail: (reason: string) => Error, at: string): void {
  const short = (v: unknown) => typeof v === 'string' && Buffer.byteLength(v) <= 255;
  if (d.exchange !== undefined && !short(d.exchange))
    throw fail(`${at}: exchange must be a string of at most 255 bytes.`);
  if (
    d.routingKeys !== undefined &&
    (!Array.isArray(d.routingKeys) || d.routingKeys.length > MAX_ROUTING_KEYS || !d.routingKeys.every(short))
  ) {
    throw fail(`${at}: routingKeys must be an array of at most ${MAX_ROUTING_KEYS} strings of at most 255 bytes.`);
  }
  if (
    d.originalExpiration !== undefined &&
    !(short(d.originalExpiration) && /^\d+$/.test(d.originalExpiration as string))
  ) {
    throw fail(`${at}: originalExpiration must be milliseconds as a decimal string.`);
  }
}

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v);

/** The system attributes only the queue's owner may give on a send. */
const OWNER_ONLY: readonly string[] = [...RESTORE_ATTRIBUTES, AMQP_ATTRIBUTE];

/**
 * Who may restore dead-letter metadata on a send, and what it may name
 * (docs/security.md). SQS itself accepts no system attribute on a send but
 * AWSTraceHeader, so these are Redrive's import extension and follow two rules:
 * - only the queue's owner may give them (nor the AMQP envelope, `RedriveAmqp`, whose
 *   properties say who sent the message): to a sender from another account, granted
 *   SendMessage by the queue's Policy, they do not exist, and are refused as SQS refuses
 *   any unknown system attribute;
 * - a `DeadLetterQueueSourceArn` names a queue of the queue's own account and region,
 *   of its type, as a dead-letter queue and its sources always are in SQS.
 * Move tasks check every destination again when they run (move-plan.ts), so nothing
 * stored, however it got there, lets a task write outside its owner's account.
 */
export function checkRestoreCaller(
  ctx: RequestContext,
  queue: Pick<QueueRecord, 'accountId'>,
  sent: MessageAttributes | undefined,
): void {
  if (!sent || ctx.accountId === queue.accountId) return;
  const name = OWNER_ONLY.find((n) => Object.hasOwn(sent, n));
  if (name !== undefined) throw errors.invalidParameterValue(`Message system attribute name '${name}' is invalid.`);
}

/** The restored source, checked against the queue it is sent to (after checkRestoreCaller). */
export function checkRestoredSource(
  queue: Pick<QueueRecord, 'accountId' | 'region' | 'fifo'>,
  restored: Restored,
): void {
  if (restored.deadLetterSourceArn === undefined) return;
  const a = parseQueueArn(restored.deadLetterSourceArn)!;
  if (a.accountId !== queue.accountId || a.region !== queue.region) {
    throw errors.invalidParameterValue(
      `Message system attribute ${SOURCE_ARN_ATTRIBUTE} is invalid. Reason: it must name a queue of this queue's account (${queue.accountId}) and region (${queue.region}).`,
    );
  }
  if (a.name.endsWith('.fifo') !== queue.fifo) {
    throw errors.invalidParameterValue(
      `Message system attribute ${SOURCE_ARN_ATTRIBUTE} is invalid. Reason: it must name a ${queue.fifo ? 'FIFO' : 'standard'} queue, as this queue is.`,
    );
  }
}

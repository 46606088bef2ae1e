import {
  DELIVERY_LIMIT_ATTRIBUTE, DLX_ATTRIBUTE, DLX_ROUTING_KEY_ATTRIBUTE, MAX_LENGTH_ATTRIBUTE, MAX_LENGTH_BYTES_ATTRIBUTE, OVERFLOW_ATTRIBUTE, TTL_ATTRIBUTE,
} from '../dead-letters/dead-letter-settings.js';
import { amqpErrors } from './errors.js';

/**
 * RabbitMQ's queue arguments (`x-…`) and how they map onto a Redrive queue. The ones a
 * Redrive attribute already expresses become that attribute; the others are kept with
 * the queue's AMQP declaration (store role `exchanges`) for what reads them.
 */

/** The arguments Redrive understands; any other is stored and ignored, as RabbitMQ ignores unknown ones. */
const CHECKS: Record<string, (v: unknown) => string | undefined> = {
  'x-message-ttl': nonNegativeInt,
  'x-expires': positiveInt,
  'x-max-length': nonNegativeInt,
  'x-max-length-bytes': nonNegativeInt,
  'x-delivery-limit': nonNegativeInt,
  'x-overflow': oneOf('drop-head', 'reject-publish', 'reject-publish-dlx'),
  'x-queue-type': oneOf('classic', 'quorum'),
  'x-dead-letter-exchange': string,
  'x-dead-letter-routing-key': string,
};

function nonNegativeInt(v: unknown): string | undefined {
  if (typeof v !== 'number' || !Number.isInteger(v)) return `{unacceptable_type,${typeof v}}`;
  return v < 0 ? `{value_negative,${v}}` : undefined;
}

function positiveInt(v: unknown): string | undefined {
  return nonNegativeInt(v) ?? (v === 0 ? '{value_zero,0}' : undefined);
}

function string(v: unknown): string | undefined {
  return typeof v === 'string' ? undefined : `{unacceptable_type,${typeof v}}`;
}

function oneOf(...allowed: string[]) {
  return (v: unknown) => (typeof v === 'string' && allowed.includes(v) ? undefined : `{unacceptable_value,${JSON.stringify(v)}}`);
}

/** Throws RabbitMQ's 406 for an argument of the wrong type or value. */
export function checkQueueArguments(name: string, args: Record<string, unknown>): void {
  for (const [key, check] of Object.entries(CHECKS)) {
    if (!Object.hasOwn(args, key)) continue;
    const problem = check(args[key]);
    if (problem) throw amqpErrors.precondition(`invalid arg '${key}' for queue '${name}' in vhost '/': ${problem}`);
  }
  if (args['x-queue-type'] === 'stream') throw amqpErrors.precondition(`invalid arg 'x-queue-type' for queue '${name}': streams are not supported`);
  if (args['x-dead-letter-routing-key'] !== undefined && args['x-dead-letter-exchange'] === undefined) {
    throw amqpErrors.precondition(`invalid arg 'x-dead-letter-routing-key' for queue '${name}' in vhost '/': Routing key specified without a dead letter exchange`);
  }
}

/**
 * The Redrive queue attributes the arguments set. RabbitMQ's TTL is in milliseconds,
 * Redrive's in seconds: it is rounded up, so a message never expires early. The
 * delivery limit applies to quorum queues only, as in RabbitMQ.
 */
export function attributesOf(args: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  const ttl = args['x-message-ttl'];
  if (typeof ttl === 'number') out[TTL_ATTRIBUTE] = String(Math.ceil(ttl / 1000));
  // A limit of 0 is RabbitMQ's "holds nothing"; Redrive's smallest limit is 1.
  if (typeof args['x-max-length'] === 'number') out[MAX_LENGTH_ATTRIBUTE] = String(Math.max(1, args['x-max-length']));
  if (typeof args['x-max-length-bytes'] === 'number') out[MAX_LENGTH_BYTES_ATTRIBUTE] = String(Math.max(1, args['x-max-length-bytes']));
  const overflow = args['x-overflow'];
  if (typeof overflow === 'string') out[OVERFLOW_ATTRIBUTE] = overflow;
  if (typeof args['x-dead-letter-exchange'] === 'string') out[DLX_ATTRIBUTE] = args['x-dead-letter-exchange'];
  if (typeof args['x-dead-letter-routing-key'] === 'string') out[DLX_ROUTING_KEY_ATTRIBUTE] = args['x-dead-letter-routing-key'];
  if (typeof args['x-delivery-limit'] === 'number' && args['x-queue-type'] === 'quorum') out[DELIVERY_LIMIT_ATTRIBUTE] = String(args['x-delivery-limit']);
  return out;
}

/** RabbitMQ compares these on a redeclaration; a difference is a 406. */
const COMPARED = ['x-message-ttl', 'x-expires', 'x-max-length', 'x-max-length-bytes', 'x-overflow', 'x-delivery-limit',
  'x-dead-letter-exchange', 'x-dead-letter-routing-key', 'x-queue-type'];

export interface QueueFlags {
  durable: boolean;
  exclusive: boolean;
  autoDelete: boolean;
}

/** Throws 406 if a redeclaration differs from the stored declaration. */
export function checkEquivalent(name: string, stored: QueueFlags & { arguments: Record<string, unknown> }, given: QueueFlags & { arguments: Record<string, unknown> }): void {
  const flags: [keyof QueueFlags, string][] = [['durable', 'durable'], ['autoDelete', 'auto_delete']];
  for (const [k, label] of flags) {
    if (stored[k] !== given[k]) {
      throw amqpErrors.precondition(`inequivalent arg '${label}' for queue '${name}' in vhost '/': received '${given[k]}' but current is '${stored[k]}'`);
    }
  }
  for (const key of COMPARED) {
    const a = stored.arguments[key];
    const b = given.arguments[key];
    // x-queue-type classic is the default: absent and classic are the same.
    const norm = (v: unknown) => (key === 'x-queue-type' && v === undefined ? 'classic' : v);
    if (JSON.stringify(norm(a)) !== JSON.stringify(norm(b))) {
      const show = (v: unknown) => (v === undefined ? 'none' : `the value '${String(v)}'`);
      throw amqpErrors.precondition(`inequivalent arg '${key}' for queue '${name}' in vhost '/': received ${show(b)} but current is ${show(a)}`);
    }
  }
}

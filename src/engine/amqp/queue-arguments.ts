import { DEAD_LETTER_SETTINGS, SETTING, type SettingValue } from '../policies/setting-spellings.js';
import { shown } from '../kernel/errors.js';
import { amqpErrors } from '../kernel/amqp-errors.js';

/**
 * RabbitMQ's queue arguments (`x-…`) and how they map onto a Redrive queue. The ones a
 * Redrive attribute already expresses become that attribute; the others are kept with
 * the queue's AMQP declaration (store role `exchanges`) for what reads them.
 */

type ArgumentCheck = (v: unknown) => string | undefined;

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

function oneOf(allowed: readonly string[]): ArgumentCheck {
  return (v: unknown) =>
    typeof v === 'string' && allowed.includes(v) ? undefined : `{unacceptable_value,${JSON.stringify(v)}}`;
}

/** How an argument spelling a dead-letter setting is checked: numbers in RabbitMQ's range, any non-negative integer. */
function settingCheck(value: SettingValue): ArgumentCheck {
  return value.type === 'int' ? nonNegativeInt : value.type === 'string' ? string : oneOf(value.values);
}

const settingChecks: Record<string, ArgumentCheck> = Object.fromEntries(
  DEAD_LETTER_SETTINGS.map((s) => [s.argument, settingCheck(s.value)]),
);

/**
 * The arguments Redrive understands, in the order RabbitMQ checks them; any other is
 * stored and ignored, as RabbitMQ ignores unknown ones.
 */
const CHECKS: Record<string, ArgumentCheck> = {
  [SETTING.messageTtlSeconds.argument]: settingChecks[SETTING.messageTtlSeconds.argument]!,
  'x-expires': positiveInt,
  [SETTING.maxLength.argument]: settingChecks[SETTING.maxLength.argument]!,
  [SETTING.maxLengthBytes.argument]: settingChecks[SETTING.maxLengthBytes.argument]!,
  [SETTING.deliveryLimit.argument]: settingChecks[SETTING.deliveryLimit.argument]!,
  [SETTING.overflow.argument]: settingChecks[SETTING.overflow.argument]!,
  'x-queue-type': oneOf(['classic', 'quorum']),
  ...settingChecks,
};

/** Throws RabbitMQ's 406 for an argument of the wrong type or value. */
export function checkQueueArguments(name: string, args: Record<string, unknown>): void {
  for (const [key, check] of Object.entries(CHECKS)) {
    if (!Object.hasOwn(args, key)) continue;
    const problem = check(args[key]);
    if (problem) throw amqpErrors.precondition(`invalid arg '${key}' for queue '${name}' in vhost '/': ${problem}`);
  }
  if (args['x-queue-type'] === 'stream')
    throw amqpErrors.precondition(`invalid arg 'x-queue-type' for queue '${name}': streams are not supported`);
  if (args['x-dead-letter-routing-key'] !== undefined && args['x-dead-letter-exchange'] === undefined) {
    throw amqpErrors.precondition(
      `invalid arg 'x-dead-letter-routing-key' for queue '${name}' in vhost '/': Routing key specified without a dead letter exchange`,
    );
  }
}

/**
 * The Redrive queue attributes the arguments set, each converted to Redrive's unit
 * (setting-spellings.ts). The delivery limit applies to quorum queues only, as in RabbitMQ.
 */
export function attributesOf(args: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const s of DEAD_LETTER_SETTINGS) {
    const v = args[s.argument];
    if (s === SETTING.deliveryLimit && args['x-queue-type'] !== 'quorum') continue;
    if (s.value.type === 'int' ? typeof v === 'number' : typeof v === 'string')
      out[s.attribute] = String(typeof v === 'number' && s.fromAmqp ? s.fromAmqp(v) : v);
  }
  return out;
}

/** RabbitMQ compares these on a redeclaration; a difference is a 406. */
const COMPARED = [
  'x-message-ttl',
  'x-expires',
  'x-max-length',
  'x-max-length-bytes',
  'x-overflow',
  'x-delivery-limit',
  'x-dead-letter-exchange',
  'x-dead-letter-routing-key',
  'x-queue-type',
];

export interface QueueFlags {
  durable: boolean;
  exclusive: boolean;
  autoDelete: boolean;
}

/** Throws 406 if a redeclaration differs from the stored declaration. */
export function checkEquivalent(
  name: string,
  stored: QueueFlags & { arguments: Record<string, unknown> },
  given: QueueFlags & { arguments: Record<string, unknown> },
): void {
  const flags: [keyof QueueFlags, string][] = [
    ['durable', 'durable'],
    ['autoDelete', 'auto_delete'],
  ];
  for (const [k, label] of flags) {
    if (stored[k] !== given[k]) {
      throw amqpErrors.precondition(
        `inequivalent arg '${label}' for queue '${name}' in vhost '/': received '${given[k]}' but current is '${stored[k]}'`,
      );
    }
  }
  for (const key of COMPARED) {
    const a = stored.arguments[key];
    const b = given.arguments[key];
    // x-queue-type classic is the default: absent and classic are the same.
    const norm = (v: unknown) => (key === 'x-queue-type' && v === undefined ? 'classic' : v);
    if (JSON.stringify(norm(a)) !== JSON.stringify(norm(b))) {
      const show = (v: unknown) => (v === undefined ? 'none' : `the value '${shown(v)}'`);
      throw amqpErrors.precondition(
        `inequivalent arg '${key}' for queue '${name}' in vhost '/': received ${show(b)} but current is ${show(a)}`,
      );
    }
  }
}

/**
 * The dead-letter settings a queue can be given four ways, one row each: as an SQS queue
 * attribute (a Redrive extension), an AMQP queue argument, a RabbitMQ management-API
 * policy key and a config-file policy key. Every reader of a spelling takes its names,
 * types and ranges from here: the SQS attribute checks (queue-attributes.ts), the AMQP
 * argument checks (amqp/queue-arguments.ts), the runtime policies (amqp/policies.ts), the
 * config file's schema (server-policy-schema.ts) and the settings in force
 * (dead-letter-settings.ts).
 *
 * `value` is Redrive's type and range, which the attribute and the config key hold. The
 * AMQP spellings take any non-negative integer for a number, as RabbitMQ does, in
 * RabbitMQ's unit: `fromAmqp` turns it into Redrive's.
 */

export type SettingValue =
  | { type: 'int'; min: number; max: number }
  | { type: 'string' }
  | { type: 'enum'; values: readonly string[] };

export const OVERFLOW_VALUES = ['drop-head', 'reject-publish', 'reject-publish-dlx'] as const;

export interface DeadLetterSettingSpelling<K extends string = string> {
  /** The config file's key, and the field of the settings in force. */
  config: K;
  /** The SQS queue attribute. */
  attribute: string;
  /** RabbitMQ's queue argument. */
  argument: string;
  /** RabbitMQ's policy definition key. */
  policy: string;
  value: SettingValue;
  /** An argument's or policy's number (RabbitMQ's unit and range) in Redrive's unit and range. */
  fromAmqp?: (v: number) => number;
}

/** RabbitMQ's TTL is in milliseconds, Redrive's in seconds: rounded up, so nothing expires early. */
const msToSeconds = (ms: number) => Math.ceil(ms / 1000);

const row = <K extends string>(r: DeadLetterSettingSpelling<K>) => r;

/** In the order the config file lists its keys. */
export const DEAD_LETTER_SETTINGS = [
  row({
    config: 'messageTtlSeconds',
    attribute: 'RedriveMessageTtlSeconds',
    argument: 'x-message-ttl',
    policy: 'message-ttl',
    value: { type: 'int', min: 0, max: 1_209_600 },
    fromAmqp: msToSeconds,
  }),
  row({
    config: 'maxLength',
    attribute: 'RedriveMaxLength',
    argument: 'x-max-length',
    policy: 'max-length',
    // 0 is RabbitMQ's "holds nothing": with reject-publish every publish is refused.
    value: { type: 'int', min: 0, max: 2 ** 31 - 1 },
  }),
  row({
    config: 'maxLengthBytes',
    attribute: 'RedriveMaxLengthBytes',
    argument: 'x-max-length-bytes',
    policy: 'max-length-bytes',
    value: { type: 'int', min: 0, max: Number.MAX_SAFE_INTEGER },
  }),
  row({
    config: 'overflow',
    attribute: 'RedriveOverflow',
    argument: 'x-overflow',
    policy: 'overflow',
    value: { type: 'enum', values: OVERFLOW_VALUES },
  }),
  // AMQP dead-letter exchanges (docs/amqp.md); an empty exchange name is the default exchange.
  row({
    config: 'deadLetterExchange',
    attribute: 'RedriveDeadLetterExchange',
    argument: 'x-dead-letter-exchange',
    policy: 'dead-letter-exchange',
    value: { type: 'string' },
  }),
  row({
    config: 'deadLetterRoutingKey',
    attribute: 'RedriveDeadLetterRoutingKey',
    argument: 'x-dead-letter-routing-key',
    policy: 'dead-letter-routing-key',
    value: { type: 'string' },
  }),
  row({
    config: 'deliveryLimit',
    attribute: 'RedriveDeliveryLimit',
    argument: 'x-delivery-limit',
    policy: 'delivery-limit',
    value: { type: 'int', min: 0, max: 2 ** 31 - 1 },
  }),
] as const;

export type SpelledSetting = (typeof DEAD_LETTER_SETTINGS)[number]['config'];

/** The row of a setting, by its config key. */
export const SETTING = Object.fromEntries(DEAD_LETTER_SETTINGS.map((s) => [s.config, s])) as {
  [K in SpelledSetting]: DeadLetterSettingSpelling<K>;
};

/** The wording of a list of allowed values: `"a", "b" or "c"`. */
export function valuesList(values: readonly string[]): string {
  const shown = values.map((v) => JSON.stringify(v));
  return shown.length < 2 ? shown.join('') : `${shown.slice(0, -1).join(', ')} or ${shown[shown.length - 1]}`;
}

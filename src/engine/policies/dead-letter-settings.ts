import { queueArn } from '../kernel/addressing.js';
import type { Overflow, ServerPolicy, ServerPolicyDefinition, ServerPolicySet } from './server-policies.js';
import { DEAD_LETTER_SETTINGS, SETTING, type DeadLetterSettingSpelling } from './setting-spellings.js';
import type { QueueRecord, RedrivePolicy } from '../kernel/types.js';

/** Extension queue attributes (documented in docs/extensions.md), as setting-spellings.ts spells them. */
export const TTL_ATTRIBUTE = SETTING.messageTtlSeconds.attribute;
export const MAX_LENGTH_ATTRIBUTE = SETTING.maxLength.attribute;
export const MAX_LENGTH_BYTES_ATTRIBUTE = SETTING.maxLengthBytes.attribute;
export const OVERFLOW_ATTRIBUTE = SETTING.overflow.attribute;
/** The message system attribute that gives one message its own time-to-live. */
export const MESSAGE_TTL_ATTRIBUTE = 'RedriveTtlSeconds';
/** Read-only: the policy that applies to the queue and the settings it contributes. */
export const APPLIED_POLICY_ATTRIBUTE = 'RedriveAppliedPolicy';

/** A queue's dead-letter settings in force: its own attributes over the matching policy. */
export interface DeadLetterSettings {
  targetArn?: string;
  maxReceiveCount?: number;
  messageTtlSeconds?: number;
  maxLength?: number;
  maxLengthBytes?: number;
  overflow: Overflow;
  /** AMQP: the dead-letter exchange (`` is the default exchange); when set it replaces the target queue. */
  deadLetterExchange?: string;
  deadLetterRoutingKey?: string;
  deliveryLimit?: number;
  /** The matching policy and what of it is in force (not overridden by the queue). */
  policy?: { name: string; applied: ServerPolicyDefinition };
}

/** When a message arriving now expires under the settings' TTL, if they have one. */
export function expiryAfter(settings: Pick<DeadLetterSettings, 'messageTtlSeconds'>, now: number): number | undefined {
  return settings.messageTtlSeconds === undefined ? undefined : now + settings.messageTtlSeconds * 1000;
}

/** The ARN of a policy's dead-letter queue for a queue of `accountId`, if it names one. */
function policyTarget(d: ServerPolicyDefinition, region: string, accountId: string): string | undefined {
  return (
    d.deadLetterTargetArn ??
    (d.deadLetterTargetName === undefined ? undefined : queueArn(region, accountId, d.deadLetterTargetName))
  );
}

/** What of a policy applies to its own dead-letter queue when it opts in: never the target. */
function limitsOf(d: ServerPolicyDefinition): ServerPolicyDefinition {
  const { messageTtlSeconds, maxLength, maxLengthBytes, overflow } = d;
  return { messageTtlSeconds, maxLength, maxLengthBytes, overflow };
}

/**
 * A setting's value as the queue's attribute holds it. An empty number or overflow is
 * unset; an empty exchange name is the default exchange, which an AMQP argument names.
 */
function attributeValue(s: DeadLetterSettingSpelling, attributes: Record<string, string>): string | number | undefined {
  const v = attributes[s.attribute];
  if (s.value.type === 'string') return v;
  if (v === undefined || v === '') return undefined;
  return s.value.type === 'int' ? Number(v) : v;
}

/**
 * Resolves the settings of `queue`. As RabbitMQ's queue arguments win over policies, an
 * attribute set on the queue wins over the policy's value for that setting. The
 * RedrivePolicy attribute holds the target and maxReceiveCount together, so a queue
 * that has one takes both from it.
 */
export function effectiveSettings(
  policies: ServerPolicySet,
  region: string,
  queue: Omit<QueueRecord, 'id'>,
): DeadLetterSettings {
  const a = queue.attributes;
  const own = a.RedrivePolicy ? (JSON.parse(a.RedrivePolicy) as RedrivePolicy) : undefined;
  const self = queueArn(region, queue.accountId, queue.name);
  const targets = (p: ServerPolicy) => policyTarget(p.definition, region, queue.accountId) === self;
  // A policy never applies to its own dead-letter queue unless it opts in, and then
  // only its limits: a lower policy that matches applies instead (docs/extensions.md).
  const policy = policies.match(
    queue.accountId,
    queue.name,
    (p) => targets(p) && !p.definition.applyToDeadLetterTarget,
  );
  const d = policy ? (targets(policy) ? limitsOf(policy.definition) : policy.definition) : {};
  const applied: ServerPolicyDefinition = {};
  const pick = <K extends keyof ServerPolicyDefinition>(
    key: K,
    mine: ServerPolicyDefinition[K] | undefined,
  ): ServerPolicyDefinition[K] | undefined => {
    // RabbitMQ's rule for management-API policies: of two numeric limits the lower applies.
    if (
      mine !== undefined &&
      policy?.lowerLimitWins &&
      typeof mine === 'number' &&
      typeof d[key] === 'number' &&
      (d[key] as number) < mine
    ) {
      applied[key] = d[key];
      return d[key];
    }
    if (mine !== undefined) return mine;
    if (d[key] !== undefined) applied[key] = d[key];
    return d[key];
  };
  let targetArn = own?.deadLetterTargetArn;
  let maxReceiveCount = own?.maxReceiveCount;
  if (!own) {
    targetArn = pick('deadLetterTargetArn', undefined);
    const byName = pick('deadLetterTargetName', undefined);
    if (byName !== undefined) targetArn = queueArn(region, queue.accountId, byName);
    maxReceiveCount = pick('maxReceiveCount', undefined);
  }
  const spelled: Record<string, unknown> = {};
  for (const s of DEAD_LETTER_SETTINGS) {
    spelled[s.config] = pick(s.config, attributeValue(s, a) as ServerPolicyDefinition[typeof s.config]);
  }
  const settings = { targetArn, maxReceiveCount, ...spelled } as DeadLetterSettings;
  // RabbitMQ's default overflow behaviour is drop-head.
  settings.overflow ??= 'drop-head';
  if (policy && Object.keys(applied).length) settings.policy = { name: policy.name, applied };
  return settings;
}

/**
 * The settings in force of each queue, kept per queue record (a changed queue is a new
 * record) until the policies change: every send and receive asks.
 */
export class SettingsInForce {
  private readonly cache = new WeakMap<Omit<QueueRecord, 'id'>, { generation: number; settings: DeadLetterSettings }>();

  constructor(private readonly policies: ServerPolicySet) {}

  of(queue: Omit<QueueRecord, 'id'>): DeadLetterSettings {
    const hit = this.cache.get(queue);
    if (hit && hit.generation === this.policies.generation) return hit.settings;
    const settings = effectiveSettings(this.policies, queue.region, queue);
    this.cache.set(queue, { generation: this.policies.generation, settings });
    return settings;
  }
}

/**
 * Dead-letter policies: server-side rules that give every queue whose name matches a
 * pattern dead-letter settings, as RabbitMQ policies do, so they can change without
 * redeploying the applications that declare the queues. Of the policies that match a
 * queue, the one with the highest priority applies (then the first by name); a queue's
 * own attributes override it setting by setting (see dead-letter-settings.ts).
 */

export type Overflow = 'drop-head' | 'reject-publish';

export interface PolicyDefinition {
  /** The dead-letter queue, by ARN or by name in the queue's own account. */
  deadLetterTargetArn?: string;
  deadLetterTargetName?: string;
  maxReceiveCount?: number;
  messageTtlSeconds?: number;
  maxLength?: number;
  maxLengthBytes?: number;
  overflow?: Overflow;
}

export interface Policy {
  name: string;
  /** A regular expression tested against queue names. */
  pattern: string;
  priority: number;
  definition: PolicyDefinition;
}

export class PolicyError extends Error {}

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

function int(v: unknown, path: string, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw new PolicyError(`${path}: must be an integer from ${min} to ${max}, not ${JSON.stringify(v)}`);
  }
  return v;
}

function str(v: unknown, path: string): string {
  if (typeof v !== 'string' || v === '') throw new PolicyError(`${path}: must be a non-empty string`);
  return v;
}

const DEFINITION_KEYS = ['deadLetterTargetArn', 'deadLetterTargetName', 'maxReceiveCount', 'messageTtlSeconds', 'maxLength', 'maxLengthBytes', 'overflow'];

function parseDefinition(v: unknown, path: string): PolicyDefinition {
  if (!isObject(v)) throw new PolicyError(`${path}: must be an object`);
  for (const k of Object.keys(v)) {
    if (!DEFINITION_KEYS.includes(k)) throw new PolicyError(`${path}.${k}: unknown setting; known: ${DEFINITION_KEYS.join(', ')}`);
  }
  const d: PolicyDefinition = {};
  if (v.deadLetterTargetArn !== undefined) {
    d.deadLetterTargetArn = str(v.deadLetterTargetArn, `${path}.deadLetterTargetArn`);
    if (!/^arn:aws:sqs:[^:]+:[^:]+:[^:]+$/.test(d.deadLetterTargetArn)) throw new PolicyError(`${path}.deadLetterTargetArn: not an SQS queue ARN`);
  }
  if (v.deadLetterTargetName !== undefined) d.deadLetterTargetName = str(v.deadLetterTargetName, `${path}.deadLetterTargetName`);
  if (d.deadLetterTargetArn && d.deadLetterTargetName) throw new PolicyError(`${path}: give deadLetterTargetArn or deadLetterTargetName, not both`);
  if (v.maxReceiveCount !== undefined) d.maxReceiveCount = int(v.maxReceiveCount, `${path}.maxReceiveCount`, 1, 1000);
  if (v.messageTtlSeconds !== undefined) d.messageTtlSeconds = int(v.messageTtlSeconds, `${path}.messageTtlSeconds`, 0, 1_209_600);
  if (v.maxLength !== undefined) d.maxLength = int(v.maxLength, `${path}.maxLength`, 1, 2 ** 31 - 1);
  if (v.maxLengthBytes !== undefined) d.maxLengthBytes = int(v.maxLengthBytes, `${path}.maxLengthBytes`, 1, Number.MAX_SAFE_INTEGER);
  if (v.overflow !== undefined) {
    if (v.overflow !== 'drop-head' && v.overflow !== 'reject-publish') {
      throw new PolicyError(`${path}.overflow: must be "drop-head" or "reject-publish"`);
    }
    d.overflow = v.overflow;
  }
  return d;
}

/** Validates a list of policies; errors name the offending path, e.g. `policies[1].pattern`. */
export function parsePolicies(v: unknown, path = 'policies'): Policy[] {
  if (!Array.isArray(v)) throw new PolicyError(`${path}: must be an array`);
  const names = new Set<string>();
  return v.map((p, i) => {
    const at = `${path}[${i}]`;
    if (!isObject(p)) throw new PolicyError(`${at}: must be an object`);
    for (const k of Object.keys(p)) {
      if (!['name', 'pattern', 'priority', 'definition'].includes(k)) throw new PolicyError(`${at}.${k}: unknown field`);
    }
    const name = str(p.name, `${at}.name`);
    if (names.has(name)) throw new PolicyError(`${at}.name: duplicate policy name "${name}"`);
    names.add(name);
    const pattern = str(p.pattern, `${at}.pattern`);
    try {
      new RegExp(pattern);
    } catch (e) {
      throw new PolicyError(`${at}.pattern: not a valid regular expression (${(e as Error).message})`);
    }
    const priority = p.priority === undefined ? 0 : int(p.priority, `${at}.priority`, -1_000_000, 1_000_000);
    return { name, pattern, priority, definition: parseDefinition(p.definition, `${at}.definition`) };
  });
}

/** The policies in force; replaced as a whole on reload, so a reader never sees half of one. */
export class PolicySet {
  private compiled: { policy: Policy; re: RegExp }[] = [];
  /** Bumped on every replace, so settings derived from older policies are recomputed. */
  generation = 0;

  constructor(policies: Policy[] = []) {
    this.replace(policies);
  }

  replace(policies: Policy[]): void {
    this.generation++;
    this.compiled = [...policies]
      .sort((a, b) => b.priority - a.priority || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map((policy) => ({ policy, re: new RegExp(policy.pattern) }));
  }

  list(): Policy[] {
    return this.compiled.map((c) => c.policy);
  }

  /** The policy that applies to a queue of this name, if any. */
  match(queueName: string): Policy | undefined {
    return this.compiled.find((c) => c.re.test(queueName))?.policy;
  }
}

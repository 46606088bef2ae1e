/**
 * Server policies (the config file's `policies`): server-side rules that give every queue whose name matches a
 * pattern dead-letter settings, as RabbitMQ policies do, so they can change without
 * redeploying the applications that declare the queues. Of the policies that match a
 * queue, the one with the highest priority applies (then the first by name); a queue's
 * own attributes override it setting by setting (see dead-letter-settings.ts).
 */
import { compilePattern, type PolicyPattern } from './policy-pattern.js';
import { issueLines, policiesSchema } from './server-policy-schema.js';
import type { OVERFLOW_VALUES } from './setting-spellings.js';

/** reject-publish-dlx refuses like reject-publish and dead-letters what it refuses (AMQP). */
export type Overflow = (typeof OVERFLOW_VALUES)[number];

export interface ServerPolicyDefinition {
  /** The dead-letter queue, by ARN or by name in the queue's own account. */
  deadLetterTargetArn?: string;
  deadLetterTargetName?: string;
  maxReceiveCount?: number;
  messageTtlSeconds?: number;
  maxLength?: number;
  maxLengthBytes?: number;
  overflow?: Overflow;
  /** AMQP: the dead-letter exchange and routing key (RabbitMQ's dead-letter-exchange, -routing-key). */
  deadLetterExchange?: string;
  deadLetterRoutingKey?: string;
  /** AMQP: RabbitMQ's delivery-limit: a message returned more often is dead-lettered (delivery_limit). */
  deliveryLimit?: number;
  /**
   * Whether the TTL, length limits and overflow also apply to the policy's own
   * dead-letter queue when the pattern matches it. Off by default: a policy like
   * `^orders-` with target `orders-dlq` would otherwise expire or push out the very
   * messages it dead-lettered. The target and maxReceiveCount never apply to it, so a
   * queue is never its own dead-letter source.
   */
  applyToDeadLetterTarget?: boolean;
}

export interface ServerPolicy {
  name: string;
  /** A policy set through the management API applies to the queues of its account only. */
  accountId?: string;
  /**
   * RabbitMQ's resolution (management-API policies): where the queue sets a numeric limit
   * too (TTL, lengths, delivery limit), the lower of the two applies; otherwise the
   * queue's own setting wins, as for config-file policies.
   */
  lowerLimitWins?: boolean;
  /** A regular expression (RE2 syntax, policy-pattern.ts) tested against queue names. */
  pattern: string;
  priority: number;
  definition: ServerPolicyDefinition;
}

/** A policy that is not valid: the config file's (parsePolicies) or one set through the management API (amqp/policies.ts). */
export class PolicyError extends Error {
  override name = 'PolicyError';
}

/**
 * Validates a list of policies (server-policy-schema.ts); the error has a line per offending
 * field, named by its path, e.g. `policies[1].pattern: must be a non-empty string, not 3`.
 */
export function parsePolicies(v: unknown, path = 'policies'): ServerPolicy[] {
  const result = policiesSchema.safeParse(v);
  if (!result.success) throw new PolicyError(issueLines(result.error, path).join('\n'));
  return result.data;
}

/**
 * The policies in force; replaced as a whole on reload, so a reader never sees half of one.
 * A queue is matched against the operator's policies (no account) and its own account's
 * only: another account's patterns never run on its names.
 */
export class ServerPolicySet {
  private all: Compiled[] = [];
  private global: Compiled[] = [];
  private byAccount = new Map<string, Compiled[]>();
  /** Bumped on every replace, so settings derived from older policies are recomputed. */
  generation = 0;

  constructor(policies: ServerPolicy[] = []) {
    this.replace(policies);
  }

  replace(policies: ServerPolicy[]): void {
    this.generation++;
    const sorted = [...policies].sort(
      (a, b) => b.priority - a.priority || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
    );
    this.all = [];
    this.global = [];
    this.byAccount = new Map();
    for (const policy of sorted) {
      const re = compilePattern(policy.pattern);
      // A stored pattern RE2 refuses (set before patterns were checked as RE2) matches nothing.
      if ('error' in re) continue;
      const c: Compiled = { policy, re, rank: this.all.length };
      this.all.push(c);
      if (policy.accountId === undefined) this.global.push(c);
      else {
        const mine = this.byAccount.get(policy.accountId);
        if (mine) mine.push(c);
        else this.byAccount.set(policy.accountId, [c]);
      }
    }
  }

  list(): ServerPolicy[] {
    return this.all.map((c) => c.policy);
  }

  /**
   * The policy that applies to a queue of this name in this account, if any, passing over
   * those `skip` refuses: the operator's and the account's policies, merged in rank order.
   */
  match(
    accountId: string,
    queueName: string,
    skip: (p: ServerPolicy) => boolean = () => false,
  ): ServerPolicy | undefined {
    const mine = this.byAccount.get(accountId) ?? NONE;
    const global = this.global;
    for (let i = 0, j = 0; i < global.length || j < mine.length; ) {
      const c = j >= mine.length || (i < global.length && global[i]!.rank < mine[j]!.rank) ? global[i++]! : mine[j++]!;
      if (c.re.test(queueName) && !skip(c.policy)) return c.policy;
    }
    return undefined;
  }
}

interface Compiled {
  policy: ServerPolicy;
  re: PolicyPattern;
  /** Its place in priority order among all policies. */
  rank: number;
}

const NONE: Compiled[] = [];

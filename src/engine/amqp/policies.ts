import type { Log } from '../context/engine-context.js';
import {
  PolicyError,
  type ServerPolicy,
  type ServerPolicyDefinition,
  type ServerPolicySet,
} from '../policies/server-policies.js';
import { patternError } from '../policies/policy-pattern.js';
import { DEAD_LETTER_SETTINGS, type SettingValue } from '../policies/setting-spellings.js';
import type { PolicyRecord, PolicyStore } from '../store/policies.js';
import { DEFAULT_ACCOUNT_QUOTAS } from '../queues/quotas.js';

/**
 * Runtime policies in RabbitMQ's management API shape (PUT /api/policies/%2F/<name> with
 * `pattern`, `definition`, `priority`, `apply-to`): checked here, kept in the store, and
 * applied with the config file's policies. A queue's own arguments override a policy,
 * setting by setting, as in RabbitMQ (dead-letter-settings.ts).
 */

type Check = (v: unknown) => boolean;

/** A policy's value of a setting: numbers in RabbitMQ's range, any non-negative integer. */
function check(value: SettingValue): Check {
  if (value.type === 'int') return (v) => typeof v === 'number' && Number.isInteger(v) && v >= 0;
  if (value.type === 'string') return (v) => typeof v === 'string';
  return (v) => typeof v === 'string' && value.values.includes(v);
}

/** The definition keys Redrive applies, with RabbitMQ's names (setting-spellings.ts). */
const KEYS: Record<string, Check> = Object.fromEntries(DEAD_LETTER_SETTINGS.map((s) => [s.policy, check(s.value)]));

const APPLY_TO = ['queues', 'exchanges', 'all'];

/** A PUT body as a policy record, or a PolicyError worded as RabbitMQ's validation errors. */
export function parsePolicyBody(accountId: string, name: string, body: unknown): PolicyRecord {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new PolicyError('not_json');
  const b = body as Record<string, unknown>;
  if (typeof b.pattern !== 'string') throw new PolicyError('Validation failed\n\npattern is required\n');
  // RE2 syntax (policy-pattern.ts): a pattern that would need backtracking is refused here.
  const patternRefused = patternError(b.pattern);
  if (patternRefused !== undefined)
    throw new PolicyError(
      `Validation failed\n\n"${b.pattern}" is not a valid regular expression (${patternRefused})\n`,
    );
  const definition = b.definition;
  if (
    !definition ||
    typeof definition !== 'object' ||
    Array.isArray(definition) ||
    Object.keys(definition).length === 0
  ) {
    throw new PolicyError('Validation failed\n\ndefinition must be a non-empty object\n');
  }
  const unknown = Object.keys(definition).filter((k) => !Object.hasOwn(KEYS, k));
  if (unknown.length)
    throw new PolicyError(
      `Validation failed\n\n[${unknown.map((k) => `<<"${k}">>`).join(',')}] are not recognised policy settings\n`,
    );
  for (const [k, v] of Object.entries(definition)) {
    if (!KEYS[k]!(v))
      throw new PolicyError(`Validation failed\n\n${JSON.stringify(v)} is not a valid value for ${k}\n`);
  }
  const d = definition as Record<string, unknown>;
  if (d['dead-letter-routing-key'] !== undefined && d['dead-letter-exchange'] === undefined) {
    throw new PolicyError('Validation failed\n\ndead-letter-routing-key requires dead-letter-exchange\n');
  }
  const priority = b.priority ?? 0;
  if (!Number.isInteger(priority))
    throw new PolicyError(`Validation failed\n\n${JSON.stringify(priority)} is not a valid priority\n`);
  const applyTo = b['apply-to'] ?? 'all';
  if (typeof applyTo !== 'string' || !APPLY_TO.includes(applyTo))
    throw new PolicyError(`Validation failed\n\n"${String(applyTo)}" is not a valid apply-to value\n`);
  return { accountId, name, pattern: b.pattern, applyTo, priority: priority as number, definition: d };
}

/** How the management API shows a policy. */
export function policyView(p: PolicyRecord) {
  return {
    vhost: '/',
    name: p.name,
    pattern: p.pattern,
    'apply-to': p.applyTo,
    definition: p.definition,
    priority: p.priority,
  };
}

/** A runtime policy as the engine applies it; one that applies to exchanges only has nothing for queues. */
function toServerPolicy(p: PolicyRecord): ServerPolicy | undefined {
  if (p.applyTo === 'exchanges') return undefined;
  const d = p.definition;
  const out: Record<string, unknown> = {};
  // As with the queue arguments: numbers in Redrive's units (TTL in whole seconds, rounded up).
  for (const s of DEAD_LETTER_SETTINGS) {
    const v = d[s.policy];
    if (s.value.type === 'int' ? typeof v === 'number' : typeof v === 'string')
      out[s.config] = typeof v === 'number' && s.fromAmqp ? s.fromAmqp(v) : v;
  }
  return {
    name: p.name,
    accountId: p.accountId,
    pattern: p.pattern,
    priority: p.priority,
    definition: out as ServerPolicyDefinition,
    lowerLimitWins: true,
  };
}

/** How often a node reads the store's policies again, for those another node set. */
const REFRESH_MS = 5_000;

/**
 * The policies in force: the config file's and the runtime ones of every account,
 * replaced together whenever either changes. Nodes sharing a store pick up each other's
 * changes within REFRESH_MS.
 */
export class RuntimePolicies {
  private runtime: PolicyRecord[] = [];
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly store: PolicyStore,
    private readonly set: ServerPolicySet,
    private config: ServerPolicy[],
    private readonly log: Log,
    /** Policies one account may hold (`--max-policies-per-account`). */
    private readonly maxPerAccount = DEFAULT_ACCOUNT_QUOTAS.policies,
  ) {}

  /** Reads the stored policies and applies them; then keeps reading them. */
  async start(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(
      () => this.refresh().catch((err) => this.log.warn({ err }, 'reading runtime policies failed')),
      REFRESH_MS,
    );
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** The config file changed (reload). */
  setConfig(policies: ServerPolicy[]): void {
    this.config = policies;
    this.apply();
  }

  list(accountId: string): PolicyRecord[] {
    return this.runtime.filter((p) => p.accountId === accountId);
  }

  /** Stores the policy and applies it; true if it replaced one. */
  async put(p: PolicyRecord): Promise<boolean> {
    const mine = this.list(p.accountId);
    const existed = mine.some((x) => x.name === p.name);
    if (!existed && mine.length >= this.maxPerAccount)
      throw new PolicyError(
        `Validation failed\n\npolicy limit in vhost '/' (${this.maxPerAccount}) is reached: delete a policy first\n`,
      );
    await this.store.put(p);
    await this.refresh();
    return existed;
  }

  async delete(accountId: string, name: string): Promise<boolean> {
    const found = await this.store.delete(accountId, name);
    await this.refresh();
    return found;
  }

  private async refresh(): Promise<void> {
    const next = await this.store.list();
    if (JSON.stringify(next) === JSON.stringify(this.runtime)) return;
    this.runtime = next;
    this.apply();
  }

  private apply(): void {
    const runtime = this.runtime.map(toServerPolicy).filter((p): p is ServerPolicy => p !== undefined);
    this.set.replace([...this.config, ...runtime]);
  }
}

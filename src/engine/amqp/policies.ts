import type { Log } from '../context.js';
import type { ServerPolicy, ServerPolicyDefinition, ServerPolicySet } from '../dead-letters/server-policies.js';
import type { PolicyRecord, PolicyStore } from '../store/policies.js';

/**
 * Runtime policies in RabbitMQ's management API shape (PUT /api/policies/%2F/<name> with
 * `pattern`, `definition`, `priority`, `apply-to`): checked here, kept in the store, and
 * applied with the config file's policies. A queue's own arguments override a policy,
 * setting by setting, as in RabbitMQ (dead-letter-settings.ts).
 */

export class PolicyError extends Error {}

type Check = (v: unknown) => boolean;
const nonNegInt: Check = (v) => typeof v === 'number' && Number.isInteger(v) && v >= 0;
const str: Check = (v) => typeof v === 'string';

/** The definition keys Redrive applies, with RabbitMQ's names. */
const KEYS: Record<string, Check> = {
  'dead-letter-exchange': str,
  'dead-letter-routing-key': str,
  'message-ttl': nonNegInt,
  'max-length': nonNegInt,
  'max-length-bytes': nonNegInt,
  overflow: (v) => v === 'drop-head' || v === 'reject-publish' || v === 'reject-publish-dlx',
  'delivery-limit': nonNegInt,
};

const APPLY_TO = ['queues', 'exchanges', 'all'];

/** A PUT body as a policy record, or a PolicyError worded as RabbitMQ's validation errors. */
export function parsePolicyBody(accountId: string, name: string, body: unknown): PolicyRecord {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new PolicyError('not_json');
  const b = body as Record<string, unknown>;
  if (typeof b.pattern !== 'string') throw new PolicyError('Validation failed\n\npattern is required\n');
  try {
    new RegExp(b.pattern);
  } catch {
    throw new PolicyError(`Validation failed\n\n"${b.pattern}" is not a valid regular expression\n`);
  }
  const definition = b.definition;
  if (!definition || typeof definition !== 'object' || Array.isArray(definition) || Object.keys(definition).length === 0) {
    throw new PolicyError('Validation failed\n\ndefinition must be a non-empty object\n');
  }
  const unknown = Object.keys(definition).filter((k) => !Object.hasOwn(KEYS, k));
  if (unknown.length) throw new PolicyError(`Validation failed\n\n[${unknown.map((k) => `<<"${k}">>`).join(',')}] are not recognised policy settings\n`);
  for (const [k, v] of Object.entries(definition)) {
    if (!KEYS[k]!(v)) throw new PolicyError(`Validation failed\n\n${JSON.stringify(v)} is not a valid value for ${k}\n`);
  }
  const d = definition as Record<string, unknown>;
  if (d['dead-letter-routing-key'] !== undefined && d['dead-letter-exchange'] === undefined) {
    throw new PolicyError('Validation failed\n\ndead-letter-routing-key requires dead-letter-exchange\n');
  }
  const priority = b.priority ?? 0;
  if (!Number.isInteger(priority)) throw new PolicyError(`Validation failed\n\n${JSON.stringify(priority)} is not a valid priority\n`);
  const applyTo = b['apply-to'] ?? 'all';
  if (typeof applyTo !== 'string' || !APPLY_TO.includes(applyTo)) throw new PolicyError(`Validation failed\n\n"${String(applyTo)}" is not a valid apply-to value\n`);
  return { accountId, name, pattern: b.pattern, applyTo, priority: priority as number, definition: d };
}

/** How the management API shows a policy. */
export function policyView(p: PolicyRecord) {
  return { vhost: '/', name: p.name, pattern: p.pattern, 'apply-to': p.applyTo, definition: p.definition, priority: p.priority };
}

/** A runtime policy as the engine applies it; one that applies to exchanges only has nothing for queues. */
export function toServerPolicy(p: PolicyRecord): ServerPolicy | undefined {
  if (p.applyTo === 'exchanges') return undefined;
  const d = p.definition;
  const out: ServerPolicyDefinition = {};
  if (typeof d['dead-letter-exchange'] === 'string') out.deadLetterExchange = d['dead-letter-exchange'];
  if (typeof d['dead-letter-routing-key'] === 'string') out.deadLetterRoutingKey = d['dead-letter-routing-key'];
  // As with x-message-ttl: milliseconds rounded up to Redrive's whole seconds.
  if (typeof d['message-ttl'] === 'number') out.messageTtlSeconds = Math.ceil(d['message-ttl'] / 1000);
  if (typeof d['max-length'] === 'number') out.maxLength = Math.max(1, d['max-length']);
  if (typeof d['max-length-bytes'] === 'number') out.maxLengthBytes = Math.max(1, d['max-length-bytes']);
  if (typeof d.overflow === 'string') out.overflow = d.overflow as ServerPolicyDefinition['overflow'];
  if (typeof d['delivery-limit'] === 'number') out.deliveryLimit = d['delivery-limit'];
  return { name: p.name, accountId: p.accountId, pattern: p.pattern, priority: p.priority, definition: out, lowerLimitWins: true };
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
  ) {}

  /** Reads the stored policies and applies them; then keeps reading them. */
  async start(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => this.refresh().catch((err) => this.log.warn({ err }, 'reading runtime policies failed')), REFRESH_MS);
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
    const existed = this.runtime.some((x) => x.accountId === p.accountId && x.name === p.name);
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

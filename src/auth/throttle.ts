import { createHash } from 'node:crypto';

/**
 * Slows down whoever guesses secrets, and only them. Every interface that checks a secret
 * (SigV4 on the SQS API, the console's sign-in, the management API's basic auth, AMQP's
 * PLAIN) asks `wait` before checking and reports the outcome; a caller told to wait is
 * answered at once with the protocol's refusal (HTTP 429 with Retry-After), never by
 * holding a request or sleeping in a handler.
 *
 * Two tables of failures in a row, each with exponential back-off after a free allowance:
 * - per client address: one address guessing any number of keys;
 * - per access key (user name): many addresses guessing one key. It applies only to
 *   addresses that have themselves failed recently, so a client with a clean record is
 *   always checked: an attacker cannot lock a key's owner out from elsewhere.
 *
 * The check and the report run in the same turn of the event loop as the secret's check
 * (nothing awaits between them), so parallel guesses are counted one after the other and
 * gain nothing. Both tables are bounded (least recently failed first out) and forget an
 * entry a quarter of an hour after its last failure; forgetting is amortised O(1), since
 * a Map iterates in insertion order and every failure re-inserts its entry at the end.
 */
export interface BackoffRules {
  /** Failures in a row checked without delay. */
  free: number;
  /** The delay after the first failure past `free`; each further failure doubles it. */
  baseMs: number;
  maxMs: number;
  /** A key with no failure for this long starts afresh. */
  forgetMs: number;
  /** Entries kept; past this the least recently failed goes. */
  maxEntries: number;
}

const ADDRESS_RULES: BackoffRules = {
  free: 10,
  baseMs: 1_000,
  maxMs: 60_000,
  forgetMs: 15 * 60_000,
  maxEntries: 100_000,
};
const KEY_RULES: BackoffRules = { free: 10, baseMs: 1_000, maxMs: 60_000, forgetMs: 15 * 60_000, maxEntries: 100_000 };

interface Entry {
  failures: number;
  lastFailure: number;
  blockedUntil: number;
}

/** Failures in a row per key, with the back-off they earn. */
export class FailureTable {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly rules: BackoffRules) {}

  get size(): number {
    return this.entries.size;
  }

  /** Milliseconds before `key` may be checked again; 0: now. */
  wait(key: string, now: number): number {
    const e = this.live(key, now);
    return e ? Math.max(0, e.blockedUntil - now) : 0;
  }

  /** Whether `key` has failed recently (within `forgetMs`). */
  hasFailed(key: string, now: number): boolean {
    return this.live(key, now) !== undefined;
  }

  failed(key: string, now: number): void {
    this.forgetOld(now);
    const e = this.live(key, now);
    const failures = (e?.failures ?? 0) + 1;
    this.entries.delete(key);
    this.entries.set(key, { failures, lastFailure: now, blockedUntil: now + delayAfter(failures, this.rules) });
    if (this.entries.size > this.rules.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }

  forget(key: string): void {
    this.entries.delete(key);
  }

  private live(key: string, now: number): Entry | undefined {
    const e = this.entries.get(key);
    return e && now - e.lastFailure <= this.rules.forgetMs ? e : undefined;
  }

  /** Drops the entries past `forgetMs` from the front: the oldest failures come first. */
  private forgetOld(now: number): void {
    for (const [key, e] of this.entries) {
      if (now - e.lastFailure <= this.rules.forgetMs) return;
      this.entries.delete(key);
    }
  }
}

export function delayAfter(failures: number, rules: BackoffRules): number {
  return failures <= rules.free
    ? 0
    : Math.min(rules.baseMs * 2 ** Math.min(failures - rules.free - 1, 30), rules.maxMs);
}

export class AuthThrottle {
  private readonly byAddress: FailureTable;
  private readonly byKey: FailureTable;

  constructor(
    rules: { address?: BackoffRules; key?: BackoffRules } = {},
    private readonly clock: () => number = Date.now,
  ) {
    this.byAddress = new FailureTable(rules.address ?? ADDRESS_RULES);
    this.byKey = new FailureTable(rules.key ?? KEY_RULES);
  }

  /**
   * Milliseconds before an attempt from `address` with `key` may be checked; 0: check it
   * now. Call right before checking the secret, then `failed` or `succeeded`.
   */
  wait(address: string, key: string | undefined): number {
    const now = this.clock();
    const a = addressKey(address);
    const own = this.byAddress.wait(a, now);
    if (own > 0 || key === undefined || !this.byAddress.hasFailed(a, now)) return own;
    return this.byKey.wait(boundedKey(key), now);
  }

  failed(address: string, key: string | undefined): void {
    const now = this.clock();
    this.byAddress.failed(addressKey(address), now);
    if (key !== undefined) this.byKey.failed(boundedKey(key), now);
  }

  /**
   * A right secret clears the key's record only: the address keeps its failures (they
   * fade with time), so a caller holding one good key cannot reset its guesses at others.
   */
  succeeded(_address: string, key: string): void {
    this.byKey.forget(boundedKey(key));
  }
}

/** A key as the table holds it: a long one (a client's guess can be megabytes) by its hash. */
function boundedKey(key: string): string {
  return key.length <= 128 ? key : `sha256:${createHash('sha256').update(key).digest('hex')}`;
}

/** Whole seconds for a Retry-After header: at least 1. */
export function retryAfterSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

/**
 * The unit an address is throttled as: an IPv4 address as itself (also when written as
 * `::ffff:a.b.c.d`), an IPv6 address by its /64, the block one host is usually given.
 */
export function addressKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (!address.includes(':')) return address;
  const [head = '', tail] = address.toLowerCase().split('%')[0]!.split('::', 2);
  const left = head ? head.split(':') : [];
  const right = tail === undefined ? [] : tail ? tail.split(':') : [];
  const groups =
    tail === undefined
      ? left
      : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/** How many failures a key may have at once, and how fast they are forgiven. */
export interface ThrottleRule {
  burst: number;
  perSecond: number;
}

const DEFAULT_LOGIN_THROTTLE = {
  /** Guesses at one user's password: 10 at once, then one every 2 s. */
  user: { burst: 10, perSecond: 0.5 } as ThrottleRule,
  /** Failures from one client address, whatever the user: 30 at once, then 2 a second. */
  address: { burst: 30, perSecond: 2 } as ThrottleRule,
};

/** Keys tracked at most; the oldest is forgotten first (a spray of user names costs bounded memory). */
const MAX_KEYS = 10_000;

/**
 * Failed AMQP sign-ins, counted per user name and per client address in token buckets.
 * While either bucket is empty, a sign-in is refused at once without checking the
 * password (a right one too), so guessing runs at the refill rate; nothing waits or holds
 * a slot meanwhile. Time is the engine's clock.
 */
export class LoginThrottle {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly now: () => number,
    private readonly rules = DEFAULT_LOGIN_THROTTLE,
  ) {}

  /** Whether a sign-in of `user` from `address` may be checked now. */
  allowed(user: string, address: string): boolean {
    return this.level(userKey(user), this.rules.user) >= 1 && this.level(`a:${address}`, this.rules.address) >= 1;
  }

  /** A sign-in was refused: one token less in each bucket. */
  failed(user: string, address: string): void {
    this.take(userKey(user), this.rules.user);
    this.take(`a:${address}`, this.rules.address);
  }

  private level(key: string, rule: ThrottleRule): number {
    const b = this.buckets.get(key);
    if (!b) return rule.burst;
    const tokens = Math.min(rule.burst, b.tokens + ((this.now() - b.at) / 1000) * rule.perSecond);
    if (tokens >= rule.burst) this.buckets.delete(key);
    return tokens;
  }

  private take(key: string, rule: ThrottleRule): void {
    const tokens = Math.max(0, this.level(key, rule) - 1);
    this.buckets.delete(key);
    this.buckets.set(key, { tokens, at: this.now() });
    if (this.buckets.size > MAX_KEYS) this.buckets.delete(this.buckets.keys().next().value!);
  }
}

const userKey = (user: string) => `u:${user.slice(0, 256)}`;

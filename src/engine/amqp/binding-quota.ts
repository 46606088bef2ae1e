import type { ExchangeStore } from '../store/exchanges.js';

/** Bindings an account may have, and one exchange (docs/security.md); `redrive serve` flags set them. */
export interface BindingLimits {
  perAccount: number;
  perExchange: number;
}

export const DEFAULT_BINDING_LIMITS: BindingLimits = { perAccount: 10_000, perExchange: 1_000 };

/** How long a count that says an account is at its quota is trusted before it is read again. */
const RECOUNT_MS = 60_000;

/**
 * The per-account binding quota. Counting an account's bindings in the store costs a read
 * of all of them, so each account's count is kept here: read once, then moved by the
 * binds and unbinds this node makes, and forgotten when a deletion removes bindings. A
 * count at the quota is read again (at most once a minute), so bindings removed another
 * way (another node, a deleted queue) give their room back.
 */
export class BindingQuota {
  private readonly counts = new Map<string, { n: number; readAt: number }>();

  constructor(
    private readonly store: Pick<ExchangeStore, 'allBindings'>,
    readonly limits: BindingLimits,
    private readonly now: () => number,
  ) {}

  /** Takes room for one binding of the account; false when it is at its quota. */
  async take(accountId: string): Promise<boolean> {
    let c = this.counts.get(accountId);
    const stale = c && c.n >= this.limits.perAccount && this.now() - c.readAt >= RECOUNT_MS;
    if (!c || stale) {
      c = { n: (await this.store.allBindings(accountId, this.limits.perAccount)).length, readAt: this.now() };
      this.counts.set(accountId, c);
    }
    if (c.n >= this.limits.perAccount) return false;
    c.n++;
    return true;
  }

  /** A binding of the account is gone (or was not made after all). */
  give(accountId: string): void {
    const c = this.counts.get(accountId);
    if (c && c.n > 0) c.n--;
  }

  /** Bindings of the account were removed in bulk: it is counted afresh next time. */
  forget(accountId: string): void {
    this.counts.delete(accountId);
  }
}

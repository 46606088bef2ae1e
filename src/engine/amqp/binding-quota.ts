import { AccountCounter } from '../kernel/account-counter.js';
import type { Clock } from '../kernel/clock.js';
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
 * The per-account binding quota (kernel/account-counter.ts). Counting an account's
 * bindings reads all of them, so it is read once, then moved by this node's binds and
 * unbinds, and forgotten when a deletion removes bindings in bulk.
 */
export function bindingCounter(
  store: Pick<ExchangeStore, 'allBindings'>,
  limits: BindingLimits,
  clock: Clock,
): AccountCounter {
  const count = async (accountId: string) => (await store.allBindings(accountId, limits.perAccount)).length;
  return new AccountCounter(count, limits.perAccount, clock, RECOUNT_MS);
}

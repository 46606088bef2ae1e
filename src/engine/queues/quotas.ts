import type { Clock } from '../kernel/clock.js';
import { AccountCounter } from '../kernel/account-counter.js';
import { sqsError, type SqsError } from '../kernel/errors.js';
import type { QueueStore } from '../store/queues.js';

/**
 * What one account may hold at once (docs/security.md, "Limits per client address and
 * quotas per account"), so that one tenant cannot take what the others need. Each is a
 * flag of `redrive serve`.
 */
export interface AccountQuotas {
  /** Queues, all regions together (`--max-queues-per-account`). SQS sets none; this is generous. */
  queues: number;
  /** Management-API policies (`--max-policies-per-account`). */
  policies: number;
  /** Active (RUNNING or CANCELLING) move tasks: SQS's 100 (`--max-move-tasks-per-account`). */
  moveTasks: number;
  /**
   * Long polls waiting at once for callers of one account (`--max-long-polls-per-account`);
   * by default half of the server's long-poll pool, so one account never takes all of it.
   */
  longPolls?: number;
}

export const DEFAULT_ACCOUNT_QUOTAS: AccountQuotas = { queues: 100_000, policies: 1_000, moveTasks: 100 };

/**
 * Console sessions one account may hold (`--max-console-sessions-per-account`); past it a
 * sign-in signs out that account's oldest (src/auth/console-sessions.ts). Here with the others.
 */
export const DEFAULT_SESSIONS_PER_ACCOUNT = 100;

/** How often an account at its queue quota may have its queues counted again. */
const RECOUNT_MS = 1_000;

/** The queue quota: each account's queues, all regions together (kernel/account-counter.ts). */
export function queueCounter(store: QueueStore, clock: Clock, max: number): AccountCounter {
  const count = async (accountId: string) => {
    let n = 0;
    for (const q of await store.all()) if (q.accountId === accountId) n++;
    return n;
  };
  return new AccountCounter(count, max, clock, RECOUNT_MS);
}

/** SQS's answer to a CreateQueue over the account's queue quota. */
export function overQueueQuota(queueName: string, max: number): SqsError {
  return sqsError(
    'OverLimit',
    `Cannot create queue ${queueName}: this account already has ${max} queues, the most this server allows (--max-queues-per-account).`,
  );
}

import type { Clock } from '../kernel/clock.js';
import { sqsError } from '../kernel/errors.js';
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
 * sign-in signs out that account's oldest (src/console/sessions.ts). Here with the others.
 */
export const DEFAULT_SESSIONS_PER_ACCOUNT = 100;

/** How often an account at its queue quota may have its queues counted again. */
const RECOUNT_MS = 1_000;

/**
 * The queue quota: a count of each account's queues kept in memory (made from the store's
 * queue list on first use), raised before each create and lowered after each delete here.
 * Queues this process does not see go (another node's deletes, AMQP's auto-delete) only
 * make it high; so an account that reaches the quota is counted again from the store
 * before it is refused, at most once a second, and the check stays a map look-up.
 */
export class QueueQuota {
  private counts?: Promise<Map<string, number>>;
  private readonly recounted = new Map<string, number>();

  constructor(
    private readonly store: QueueStore,
    private readonly clock: Clock,
    readonly max: number,
  ) {}

  /**
   * Reserves one queue for the account (true), or throws SQS's `OverLimit`; at the quota, a
   * queue that `exists` already is not refused (CreateQueue of an existing queue returns
   * it), and nothing is reserved (false). Call `release` when a reserved queue was not
   * created after all.
   */
  async reserve(accountId: string, queueName: string, exists: () => Promise<boolean>): Promise<boolean> {
    let counts = await (this.counts ??= this.countAll());
    if ((counts.get(accountId) ?? 0) >= this.max) {
      const now = this.clock.now();
      if (now - (this.recounted.get(accountId) ?? Number.NEGATIVE_INFINITY) >= RECOUNT_MS) {
        this.recounted.set(accountId, now);
        this.counts = this.countAll();
        counts = await this.counts;
      }
      if ((counts.get(accountId) ?? 0) >= this.max) {
        if (await exists()) return false;
        throw sqsError(
          'OverLimit',
          `Cannot create queue ${queueName}: this account already has ${this.max} queues, the most this server allows (--max-queues-per-account).`,
        );
      }
    }
    counts.set(accountId, (counts.get(accountId) ?? 0) + 1);
    return true;
  }

  /** A reserved queue was not created, or a queue of the account was deleted. */
  release(accountId: string): void {
    void this.counts?.then((counts) => {
      const n = counts.get(accountId) ?? 0;
      if (n <= 1) counts.delete(accountId);
      else counts.set(accountId, n - 1);
    });
  }

  private async countAll(): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    for (const q of await this.store.all()) counts.set(q.accountId, (counts.get(q.accountId) ?? 0) + 1);
    return counts;
  }
}

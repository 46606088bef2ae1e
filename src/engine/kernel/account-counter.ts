import type { Clock } from './clock.js';

/**
 * How many of something one account holds (queues, AMQP bindings), kept in memory so a
 * quota check is a map look-up. An account's count is read from the store on its first
 * use (one read shared by the calls waiting for it), then moved by `take` and `give` on
 * this node. What goes another way (another node's deletes, a deleted queue's bindings,
 * AMQP's auto-delete) only leaves the count high, so an account at its limit is read
 * again before it is refused, at most once per `recountMs`; `forget` drops a count that a
 * bulk removal made wrong.
 */
export class AccountCounter {
  private readonly counts = new Map<string, { n: number; readAt: number }>();
  private readonly reading = new Map<string, Promise<{ n: number; readAt: number }>>();

  constructor(
    /** The account's count as the store has it now. */
    private readonly read: (accountId: string) => Promise<number>,
    readonly max: number,
    private readonly clock: Clock,
    private readonly recountMs: number,
  ) {}

  /** Takes room for one more of the account's; false when it holds `max` already. */
  async take(accountId: string): Promise<boolean> {
    const c = await this.current(accountId);
    if (c.n >= this.max) return false;
    c.n++;
    return true;
  }

  /** One of the account's is gone, or was not made after all. */
  give(accountId: string): void {
    const c = this.counts.get(accountId);
    if (c && c.n > 0) c.n--;
  }

  /** The account's count is unknown (a bulk removal): it is read afresh on its next use. */
  forget(accountId: string): void {
    this.counts.delete(accountId);
  }

  private current(accountId: string): Promise<{ n: number; readAt: number }> | { n: number; readAt: number } {
    const c = this.counts.get(accountId);
    if (c && (c.n < this.max || this.clock.now() - c.readAt < this.recountMs)) return c;
    let pending = this.reading.get(accountId);
    if (!pending) {
      pending = this.read(accountId)
        .then((n) => {
          const fresh = { n, readAt: this.clock.now() };
          this.counts.set(accountId, fresh);
          return fresh;
        })
        .finally(() => this.reading.delete(accountId));
      this.reading.set(accountId, pending);
    }
    return pending;
  }
}

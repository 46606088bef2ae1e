import type Database from 'better-sqlite3';
import {
  holderPrefix,
  type HeldDeliveryStore,
  type HolderState,
  type ReleasedCount,
} from '../../engine/store/held-deliveries.js';
import type { GroupCommit } from './group-commit.js';
import type { SqliteWakeups } from './wakeups.js';

/**
 * One process owns a data directory (dir-lock.ts), so every holder but this process's
 * is gone. Deliveries in flight are found through the queue's hidden range of
 * deliveries_ready, one queue at a time, never a scan of all messages.
 */
export class SqliteHeldDeliveries implements HeldDeliveryStore {
  readonly shared = false;
  private self?: string;
  private readonly sql;

  constructor(
    db: Database.Database,
    private readonly commit: GroupCommit,
    private readonly wakeups: SqliteWakeups,
  ) {
    this.sql = {
      holders: db
        .prepare(
          `SELECT DISTINCT CAST(substr(receipt, 6, 16) AS TEXT) AS holder FROM deliveries
          WHERE queue_id IN (SELECT id FROM queues) AND visible_at > ? AND CAST(receipt AS TEXT) LIKE 'amqp.%'`,
        )
        .pluck(),
      release: db
        .prepare(
          `UPDATE deliveries SET visible_at = min(sent_at, @now), receipt = NULL
          WHERE queue_id IN (SELECT id FROM queues) AND visible_at > @now AND CAST(receipt AS TEXT) LIKE @prefix
          RETURNING queue_id`,
        )
        .pluck(),
    };
  }

  async register(holder: string): Promise<void> {
    this.self = holder;
  }

  async holders(now: number): Promise<HolderState[]> {
    return (this.sql.holders.all(now) as string[])
      .filter((h) => h !== this.self)
      .map((holder) => ({ holder, alive: false }));
  }

  async release(holder: string, now: number): Promise<{ alive: true } | { alive: false; released: ReleasedCount[] }> {
    if (holder === this.self) return { alive: true };
    const counts = await this.commit.run(() => {
      const byQueue = new Map<number, number>();
      for (const id of this.sql.release.all({ now, prefix: `${holderPrefix(holder)}%` }) as number[])
        byQueue.set(id, (byQueue.get(id) ?? 0) + 1);
      for (const [id, n] of byQueue) this.wakeups.wakeAfterCommit(id, n);
      return byQueue;
    });
    return { alive: false, released: [...counts].map(([queueId, count]) => ({ queueId, count })) };
  }
}

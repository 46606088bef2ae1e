import type pg from 'pg';
import {
  holderPrefix,
  type HeldDeliveryStore,
  type HolderState,
  type ReleasedCount,
} from '../../engine/store/held-deliveries.js';
import { query } from './sql.js';
import type { PostgresWakeups } from './wakeups.js';

const LEASE = 'amqp-holder:';
const lockKey = (holder: string) => `redrive-amqp-holder:${holder}`;

/**
 * Several nodes share the database. Each registers its holder id in `leases` (with
 * `until` 0: a registry entry, not a timed lease) and holds a session advisory lock on
 * it for as long as it runs, on its LISTEN connection (wakeups.ts), so it opens no
 * connection more; PostgreSQL drops the lock when that connection ends (the process
 * died, or its connection was reset). A holder whose lock can be taken is gone, and only
 * its deliveries are released.
 *
 * While a running node's LISTEN connection is being re-established its lock is free, and
 * another node may release its deliveries: they are then delivered again (at least
 * once, as AMQP allows) and its acknowledgements of them are ignored.
 */
export class PostgresHeldDeliveries implements HeldDeliveryStore {
  readonly shared = true;
  private self?: string;

  constructor(
    private readonly pool: pg.Pool,
    private readonly wakeups: PostgresWakeups,
  ) {}

  /** Again on every check: the row comes back if another node took it while this one's lock was briefly free. */
  async register(holder: string): Promise<void> {
    if (this.self !== holder) {
      this.self = holder;
      await this.wakeups.holdLock(lockKey(holder));
    }
    await query(this.pool, 'INSERT INTO leases (name, owner, until) VALUES ($1, $2, 0) ON CONFLICT (name) DO NOTHING', [
      LEASE + holder,
      holder,
    ]);
  }

  /** Whether the holder's process still holds its lock: taking it (and letting it go at once) means it is gone. */
  private async alive(holder: string): Promise<boolean> {
    if (holder === this.self) return true;
    const c = await this.pool.connect();
    try {
      const { rows } = await c.query<{ got: boolean }>('SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS got', [
        lockKey(holder),
      ]);
      if (!rows[0]!.got) return true;
      await c.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [lockKey(holder)]);
      return false;
    } finally {
      c.release();
    }
  }

  async holders(): Promise<HolderState[]> {
    const { rows } = await query<{ owner: string }>(this.pool, 'SELECT owner FROM leases WHERE name LIKE $1', [
      `${LEASE}%`,
    ]);
    const out: HolderState[] = [];
    for (const { owner } of rows) if (owner !== this.self) out.push({ holder: owner, alive: await this.alive(owner) });
    return out;
  }

  async release(holder: string, now: number): Promise<{ alive: true } | { alive: false; released: ReleasedCount[] }> {
    if (await this.alive(holder)) return { alive: true };
    const { rows } = await query<{ queue_id: string; n: string }>(
      this.pool,
      `WITH r AS (
         UPDATE deliveries SET visible_at = LEAST(sent_at, $1), receipt = NULL
          WHERE queue_id IN (SELECT id FROM queues) AND visible_at > $1 AND receipt LIKE $2
          RETURNING queue_id)
       SELECT queue_id, count(*) AS n FROM r GROUP BY queue_id`,
      // An AMQP token is stored as its UTF-8 (receipt-bytes.ts), so its holder's prefix is a LIKE pattern of bytes.
      [now, Buffer.from(`${holderPrefix(holder)}%`)],
    );
    await query(this.pool, 'DELETE FROM leases WHERE name = $1', [LEASE + holder]);
    const released = rows.map((r) => ({ queueId: Number(r.queue_id), count: Number(r.n) }));
    for (const r of released) this.wakeups.wake(r.queueId);
    return { alive: false, released };
  }
}

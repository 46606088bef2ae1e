import type pg from 'pg';
import type { MaintenanceStore } from '../../engine/store/maintenance.js';
import { query } from './sql.js';

const SWEEP_BATCH = 5000;

export class PgMaintenance implements MaintenanceStore {
  constructor(private readonly pool: pg.Pool) {}

  async forgetDeduplication(now: number): Promise<number> {
    const a = await query(this.pool, 'DELETE FROM fifo_dedup WHERE expires_at <= $1', [now]);
    const b = await query(this.pool, 'DELETE FROM receive_attempts WHERE expires_at <= $1', [now]);
    return (a.rowCount ?? 0) + (b.rowCount ?? 0);
  }

  async deleteSentBefore(queueId: number, cutoff: number): Promise<number> {
    let total = 0;
    // Batches keep each transaction short, so a large sweep never holds many locks.
    for (;;) {
      const { rowCount } = await query(this.pool,
        `DELETE FROM messages WHERE seq IN (
           SELECT seq FROM messages WHERE queue_id = $1 AND sent_at < $2 LIMIT ${SWEEP_BATCH})`,
        [queueId, cutoff],
      );
      total += rowCount ?? 0;
      if ((rowCount ?? 0) < SWEEP_BATCH) return total;
    }
  }

  async secret(name: string, fresh: string): Promise<string> {
    // The first node to ask stores its value; every node then reads the same one.
    await query(this.pool, 'INSERT INTO secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [name, fresh]);
    const { rows } = await query<{ value: string }>(this.pool, 'SELECT value FROM secrets WHERE name = $1', [name]);
    return rows[0]!.value;
  }

  async tryLease(name: string, owner: string, now: number, ttlMs: number): Promise<boolean> {
    // Taken when free, expired, or already ours (a renewal); one statement, so two nodes
    // asking at once cannot both win.
    const { rows } = await query(this.pool,
      `INSERT INTO leases AS l (name, owner, until) VALUES ($1, $2, $4)
       ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, until = excluded.until
        WHERE l.owner = excluded.owner OR l.until <= $3
       RETURNING 1`,
      [name, owner, now, now + ttlMs],
    );
    return rows.length === 1;
  }
}

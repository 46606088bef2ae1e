import type pg from 'pg';
import type { MaintenanceStore, RetentionDue, RetentionRule } from '../../engine/store/maintenance.js';
import { errors } from '../../engine/kernel/errors.js';
import { postgresMigrations } from './migrate.js';
import { query } from './sql.js';

const SWEEP_BATCH = 5000;
/** A readiness check that takes longer than this fails: a load balancer must not wait on it. */
const READY_TIMEOUT_MS = 2000;

export class PostgresMaintenance implements MaintenanceStore {
  constructor(private readonly pool: pg.Pool) {}

  async retentionDue(rule: RetentionRule, limit: number): Promise<RetentionDue[]> {
    // One probe of each queue's first position (messages_position), in the database.
    const { rows } = await query<{ queue_id: string; due_at: string }>(
      this.pool,
      `SELECT id AS queue_id, due_at FROM (
         SELECT q.id, (SELECT sent_at FROM messages m WHERE m.queue_id = q.id ORDER BY seq LIMIT 1)
           + coalesce((q.attributes::jsonb ->> $1)::bigint, $2) * 1000 AS due_at
         FROM queues q) d
       WHERE due_at IS NOT NULL ORDER BY due_at LIMIT $3`,
      [rule.attribute, rule.defaultSeconds, limit],
    );
    return rows.map((r) => ({ queueId: Number(r.queue_id), dueAt: Number(r.due_at) }));
  }

  async expiryDue(now: number, limit: number): Promise<number[]> {
    const { rows } = await query<{ queue_id: string }>(
      this.pool,
      'SELECT DISTINCT queue_id FROM messages WHERE expires_at <= $1 AND visible_at <= $1 LIMIT $2',
      [now, limit],
    );
    return rows.map((r) => Number(r.queue_id));
  }

  async forgetDeduplication(now: number): Promise<number> {
    const a = await query(this.pool, 'DELETE FROM fifo_dedup WHERE expires_at <= $1', [now]);
    const b = await query(this.pool, 'DELETE FROM receive_attempts WHERE expires_at <= $1', [now]);
    return (a.rowCount ?? 0) + (b.rowCount ?? 0);
  }

  async deleteSentBefore(queueId: number, cutoff: number): Promise<number> {
    let total = 0;
    // Batches keep each transaction short, so a large sweep never holds many locks. The
    // sweep walks the queue's positions from the first and stops at the first message
    // inside retention (sent_at does not decrease along them: migrations/000014.sql).
    for (;;) {
      const { rowCount } = await query(
        this.pool,
        `DELETE FROM messages WHERE seq IN (
           SELECT seq FROM messages WHERE queue_id = $1 AND sent_at < $2 AND seq < coalesce(
             (SELECT seq FROM messages WHERE queue_id = $1 AND sent_at >= $2 ORDER BY seq LIMIT 1), ${Number.MAX_SAFE_INTEGER})
           ORDER BY seq LIMIT ${SWEEP_BATCH})`,
        [queueId, cutoff],
      );
      total += rowCount ?? 0;
      if ((rowCount ?? 0) < SWEEP_BATCH) return total;
    }
  }

  async secret(name: string, fresh: string): Promise<string> {
    // The first node to ask stores its value; every node then reads the same one.
    await query(this.pool, 'INSERT INTO secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [
      name,
      fresh,
    ]);
    const { rows } = await query<{ value: string }>(this.pool, 'SELECT value FROM secrets WHERE name = $1', [name]);
    return rows[0]!.value;
  }

  async tryLease(name: string, owner: string, now: number, ttlMs: number): Promise<boolean> {
    // Taken when free, expired, or already ours (a renewal); one statement, so two nodes
    // asking at once cannot both win.
    const { rows } = await query(
      this.pool,
      `INSERT INTO leases AS l (name, owner, until) VALUES ($1, $2, $4)
       ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, until = excluded.until
        WHERE l.owner = excluded.owner OR l.until <= $3
       RETURNING 1`,
      [name, owner, now, now + ttlMs],
    );
    return rows.length === 1;
  }

  /**
   * One round trip through the pool: the database answers, accepts writes (a standby or
   * a database set `default_transaction_read_only` would refuse every send), and its
   * schema is at this code's version. Bounded in time, as a database that does not
   * answer must read as not ready rather than hang the check.
   */
  async ready(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(errors.storageUnavailable(`the database did not answer within ${READY_TIMEOUT_MS} ms`, 'ETIMEDOUT')),
        READY_TIMEOUT_MS,
      );
    });
    try {
      const { rows } = await Promise.race([
        timeout,
        this.pool
          .query<{ read_only: string; recovery: boolean; version: number | null }>(
            `SELECT current_setting('transaction_read_only') AS read_only, pg_is_in_recovery() AS recovery,
                (SELECT max(version) FROM redrive_migrations) AS version`,
          )
          .catch((e: { code?: string }) => {
            // 42P01: no redrive_migrations table, e.g. a database dropped and created again empty.
            if (e.code === '42P01') return { rows: [{ read_only: 'off', recovery: false, version: 0 }] };
            throw e;
          }),
      ]);
      const r = rows[0]!;
      if (r.recovery)
        throw errors.storageUnavailable('the database is a standby in recovery, which refuses writes', '25006');
      if (r.read_only === 'on') throw errors.storageUnavailable('the database is read-only', '25006');
      if (r.version !== postgresMigrations().length) {
        throw new Error(
          `the database schema is at version ${r.version ?? 0}, not ${postgresMigrations().length}: migrations have not run`,
        );
      }
    } finally {
      clearTimeout(timer);
    }
  }
}

import type Database from 'better-sqlite3';
import type { MaintenanceStore, RetentionDue, RetentionRule } from '../../engine/store/maintenance.js';
import { BOUND_LIMIT } from './sql.js';
import type { GroupCommit } from './group-commit.js';

const SWEEP_BATCH = 5000;

export class SqliteMaintenance implements MaintenanceStore {
  private readonly sql;

  constructor(
    db: Database.Database,
    private readonly commit: GroupCommit,
  ) {
    this.sql = {
      sweep: db.prepare(
        `DELETE FROM messages WHERE seq IN (SELECT seq FROM messages WHERE queue_id = ? AND sent_at < ? LIMIT ${SWEEP_BATCH})`,
      ),
      // One probe of messages_age per queue, in SQLite: about a microsecond each.
      retentionDue: db.prepare(
        `SELECT id AS queueId, due_at AS dueAt FROM (
           SELECT q.id, (SELECT min(sent_at) FROM messages m WHERE m.queue_id = q.id)
             + coalesce(CAST(json_extract(q.attributes, '$.' || ?) AS INTEGER), ?) * 1000 AS due_at
           FROM queues q)
         WHERE due_at IS NOT NULL ORDER BY due_at ${BOUND_LIMIT}`,
      ),
      // messages_ttl (migration 9) holds only messages with a time-to-live.
      expiryDue: db.prepare(
        `SELECT DISTINCT queue_id AS id FROM messages WHERE expires_at <= ? AND visible_at <= ? ${BOUND_LIMIT}`,
      ).pluck(),
      forgetDedup: db.prepare('DELETE FROM fifo_dedup WHERE expires_at <= ?'),
      forgetAttempts: db.prepare('DELETE FROM receive_attempts WHERE expires_at <= ?'),
      storeSecret: db.prepare('INSERT OR IGNORE INTO secrets (name, value) VALUES (?, ?)'),
      secret: db.prepare('SELECT value FROM secrets WHERE name = ?'),
    };
  }

  async deleteSentBefore(queueId: number, cutoff: number): Promise<number> {
    let total = 0;
    // Batches keep each transaction short, so a large sweep never stalls requests.
    for (;;) {
      const n = await this.commit.run(() => this.sql.sweep.run(queueId, cutoff).changes);
      total += n;
      if (n < SWEEP_BATCH) return total;
    }
  }

  async retentionDue(rule: RetentionRule, limit: number): Promise<RetentionDue[]> {
    return this.sql.retentionDue.all(rule.attribute, rule.defaultSeconds, limit) as RetentionDue[];
  }

  async expiryDue(now: number, limit: number): Promise<number[]> {
    return this.sql.expiryDue.all(now, now, limit) as number[];
  }

  forgetDeduplication(now: number): Promise<number> {
    return this.commit.run(() => this.sql.forgetDedup.run(now).changes + this.sql.forgetAttempts.run(now).changes);
  }

  /** One process owns the database file, so it always holds every lease. */
  async tryLease(): Promise<boolean> {
    return true;
  }

  secret(name: string, fresh: string): Promise<string> {
    return this.commit.run(() => {
      this.sql.storeSecret.run(name, fresh);
      return (this.sql.secret.get(name) as { value: string }).value;
    });
  }
}

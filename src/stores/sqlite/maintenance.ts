import type Database from 'better-sqlite3';
import type { MaintenanceStore } from '../../engine/store/maintenance.js';
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

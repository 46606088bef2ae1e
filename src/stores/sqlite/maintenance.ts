import type Database from 'better-sqlite3';
import { constants } from 'node:fs';
import { access, statfs } from 'node:fs/promises';
import { dirname } from 'node:path';
import { errors } from '../../engine/kernel/errors.js';
import type { MaintenanceStore, RetentionDue, RetentionRule } from '../../engine/store/maintenance.js';
import { BOUND_LIMIT } from './sql.js';
import type { GroupCommit } from './group-commit.js';
import { sqliteMigrations } from './migrate.js';

const SWEEP_BATCH = 5000;
/**
 * Below this much free space the data directory counts as full: the largest request (a
 * 1 MiB message) is written once to the WAL and once more into the database file.
 */
const MIN_FREE_BYTES = 2 * 1024 * 1024;

export class SqliteMaintenance implements MaintenanceStore {
  private readonly sql;

  /** The data directory; none for the in-memory store. */
  private readonly dir?: string;

  constructor(
    db: Database.Database,
    private readonly commit: GroupCommit,
  ) {
    if (!db.memory) this.dir = dirname(db.name);
    this.sql = {
      schemaVersion: db.prepare('PRAGMA user_version').pluck(),
      // Writing the version it already has changes nothing, yet dirties page 1, so the
      // commit appends one WAL frame: a real write, with no table of its own.
      probeWrite: db.prepare(`PRAGMA user_version = ${sqliteMigrations().length}`),
      // sent_at never decreases along a queue's positions (docs/architecture.md, Stores):
      // the sweep walks them from the first and stops at the first message inside retention.
      sweep: db.prepare(
        `DELETE FROM deliveries WHERE queue_id = ? AND seq IN (
           SELECT seq FROM deliveries WHERE queue_id = ? AND seq < coalesce(
             (SELECT seq FROM deliveries WHERE queue_id = ? AND sent_at >= ? ORDER BY seq LIMIT 1), 9e18)
           AND sent_at < ? ORDER BY seq LIMIT ${SWEEP_BATCH})`,
      ),
      // One probe of a queue's first position, in SQLite: about a microsecond each.
      retentionDue: db.prepare(
        `SELECT id AS queueId, due_at AS dueAt FROM (
           SELECT q.id, (SELECT sent_at FROM deliveries d WHERE d.queue_id = q.id ORDER BY seq LIMIT 1)
             + coalesce(CAST(json_extract(q.attributes, '$.' || ?) AS INTEGER), ?) * 1000 AS due_at
           FROM queues q)
         WHERE due_at IS NOT NULL ORDER BY due_at ${BOUND_LIMIT}`,
      ),
      // messages_ttl (migrations/000011.sql) holds only messages with a time-to-live.
      expiryDue: db
        .prepare(
          `SELECT DISTINCT m.queue_id AS id FROM messages m JOIN deliveries d ON d.queue_id = m.queue_id AND d.seq = m.seq
            WHERE m.expires_at <= ? AND d.visible_at <= ? ${BOUND_LIMIT}`,
        )
        .pluck(),
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
      const n = await this.commit.run(() => this.sql.sweep.run(queueId, queueId, queueId, cutoff, cutoff).changes);
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

  /**
   * A read alone would not notice a data directory that became read-only or full: the
   * open database keeps answering reads. So, in order: the schema version (a query that
   * also proves migrations ran); whether the kernel lets us write into the directory
   * (`access(W_OK)`, which refuses root too on a read-only mount or an immutable
   * directory, where a restart could no longer create the WAL); the free space
   * (`statfs`), since a small write can still fit into the WAL's old frames while a
   * large send cannot; and finally one real write through the group commit, which
   * catches whatever the checks above cannot see (I/O errors, a file system the kernel
   * turned read-only after an error).
   */
  async ready(): Promise<void> {
    const version = this.sql.schemaVersion.get() as number;
    if (version !== sqliteMigrations().length) {
      throw new Error(
        `the database schema is at version ${version}, not ${sqliteMigrations().length}: migrations have not run`,
      );
    }
    if (this.dir) {
      const dir = this.dir;
      await access(dir, constants.W_OK).catch((e: NodeJS.ErrnoException) => {
        const code = e.code ?? 'EACCES';
        throw errors.storageUnavailable(
          code === 'ENOENT' ? `the data directory ${dir} no longer exists` : `the data directory ${dir} is read-only`,
          code,
        );
      });
      const fs = await statfs(dir);
      const free = fs.bavail * fs.bsize;
      if (free < MIN_FREE_BYTES) {
        // Not full yet (sends may still succeed), but too low to promise the largest one.
        throw errors.storageUnavailable(
          `the disk holding the data directory ${dir} has ${free} bytes free, below the free-space threshold of ${MIN_FREE_BYTES} bytes`,
          'LOW_FREE_SPACE',
        );
      }
    }
    await this.commit.run(() => this.sql.probeWrite.run());
  }
}

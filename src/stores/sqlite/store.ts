import type Database from 'better-sqlite3';
import { SqliteHeldDeliveries } from './held-deliveries.js';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { DEFAULT_REGION } from '../../engine/kernel/addressing.js';
import type { Store, StoreStats } from '../../engine/store/store.js';
import { guardStorage } from '../storage-guard.js';
import { SqliteActivity } from './activity.js';
import { Checkpointer, FALLBACK_CHECKPOINT_PAGES } from './checkpointer.js';
import { SqliteDeadLetters } from './dead-letters.js';
import { SqliteExchanges } from './exchanges.js';
import { SqlitePolicies } from './policies.js';
import { GroupCommit } from './group-commit.js';
import { SqliteMaintenance } from './maintenance.js';
import { SqliteMessages } from './messages.js';
import { migrate } from './migrate.js';
import { SqliteMoveTasks } from './move-tasks.js';
import { SqliteQueues } from './queues.js';
import { MessageRows } from './message-rows.js';
import { sqliteOpenError, sqliteStorageError } from './storage-errors.js';
import { DirectoryLock } from './dir-lock.js';
import { SqliteWakeups } from './wakeups.js';
import { openDatabase } from './driver.js';

/**
 * `process`: a write is acknowledged once it is in the WAL (survives a crash of the
 * server process; the OS writes it out). `power`: fsync on every commit as well
 * (survives power loss). `none`: no journal at all, for the in-memory store.
 */
export type Durability = 'process' | 'power' | 'none';

export interface SqliteOptions {
  /** A file path, or ':memory:'. */
  path: string;
  durability?: Durability;
  /** The region queues from before regions move into when the schema is migrated (the server's `--region`). */
  defaultRegion?: string;
}

/** The size the WAL file is truncated back to after a checkpoint, once it grew past it. */
const WAL_SIZE_LIMIT_BYTES = 4 * 1024 * 1024;

/**
 * The embedded store: one SQLite file in WAL mode (or an in-memory database, the memory
 * store), written by this process alone through one group commit.
 */
export class SqliteStore implements Store {
  readonly kind: string;
  readonly queues: SqliteQueues;
  readonly messages: SqliteMessages;
  readonly deadLetters: SqliteDeadLetters;
  readonly moveTasks: SqliteMoveTasks;
  readonly maintenance: SqliteMaintenance;
  readonly exchanges: SqliteExchanges;
  readonly policies: SqlitePolicies;
  readonly wakeups = new SqliteWakeups();
  readonly activity: SqliteActivity;
  readonly heldDeliveries: SqliteHeldDeliveries;
  private readonly db: Database.Database;
  private readonly commit: GroupCommit;
  private readonly checkpointer?: Checkpointer;
  private readonly lock?: DirectoryLock;

  constructor(opts: SqliteOptions) {
    const memory = opts.path === ':memory:';
    this.kind = memory ? 'memory' : 'sqlite';
    const durability = opts.durability ?? (memory ? 'none' : 'process');
    const synchronous = durability === 'power' ? 'FULL' : durability === 'process' ? 'NORMAL' : 'OFF';
    if (memory) {
      this.db = openDatabase(opts.path);
      tune(this.db, synchronous);
      migrate(this.db, opts.path, opts.defaultRegion ?? DEFAULT_REGION);
    } else {
      const opened = openFile(opts.path, synchronous, opts.defaultRegion ?? DEFAULT_REGION);
      this.db = opened.db;
      this.lock = opened.lock;
      this.db.pragma(`wal_autocheckpoint = ${FALLBACK_CHECKPOINT_PAGES}`);
      // The WAL file keeps its largest size unless told otherwise: after a burst (or a
      // disk that filled up) it would hold that space for good. Past this size it is
      // truncated once it has been checkpointed and starts over.
      this.db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
      this.checkpointer = new Checkpointer(opts.path, synchronous);
    }
    const rows = new MessageRows(this.db);
    this.commit = new GroupCommit(this.db, {
      afterCommit: () => this.wakeups.committed(),
      afterRollback: () => rows.resync(),
    });
    const queues = new SqliteQueues(this.db, this.commit);
    const deadLetters = new SqliteDeadLetters(
      this.db,
      this.commit,
      this.wakeups,
      rows,
      (q) => queues.insert(q).queue.id,
    );
    this.queues = guardStorage(queues, sqliteStorageError);
    this.deadLetters = guardStorage(deadLetters, sqliteStorageError);
    this.messages = guardStorage(
      new SqliteMessages(this.db, this.commit, this.wakeups, deadLetters, rows),
      sqliteStorageError,
    );
    this.moveTasks = guardStorage(new SqliteMoveTasks(this.db, this.commit, this.wakeups, rows), sqliteStorageError);
    this.maintenance = guardStorage(new SqliteMaintenance(this.db, this.commit), sqliteStorageError);
    this.activity = guardStorage(new SqliteActivity(this.db, this.commit), sqliteStorageError);
    this.exchanges = guardStorage(new SqliteExchanges(this.db, this.commit), sqliteStorageError);
    this.policies = guardStorage(new SqlitePolicies(this.db, this.commit), sqliteStorageError);
    this.heldDeliveries = guardStorage(
      new SqliteHeldDeliveries(this.db, this.commit, this.wakeups),
      sqliteStorageError,
    );
  }

  stats(): StoreStats {
    return { groupCommit: { batchSize: this.commit.batchSizes, commitSeconds: this.commit.commitSeconds } };
  }

  async close(): Promise<void> {
    this.commit.flush();
    await this.checkpointer?.close();
    if (this.db.open) this.db.close();
    this.lock?.release();
  }
}

function tune(db: Database.Database, synchronous: string): void {
  db.pragma(`synchronous = ${synchronous}`);
  db.pragma('busy_timeout = 5000');
  db.pragma('cache_size = -65536');
}

/**
 * Opens the database file of a data directory this process then owns (dir-lock.ts),
 * schema up to date and writable. A failure is one line naming the file and what to
 * do, and leaves behind nothing this attempt created: no directory, no lock file.
 */
function openFile(
  path: string,
  synchronous: string,
  defaultRegion: string,
): { db: Database.Database; lock: DirectoryLock } {
  const files = [path, `${path}-wal`, `${path}-shm`];
  const existed = files.map((f) => existsSync(f));
  let createdDir: string | undefined;
  let lock: DirectoryLock | undefined;
  let db: Database.Database | undefined;
  try {
    createdDir = mkdirSync(dirname(path), { recursive: true });
    lock = DirectoryLock.acquire(dirname(path));
    db = openDatabase(path);
    db.pragma('journal_mode = WAL');
    tune(db, synchronous);
    migrate(db, path, defaultRegion);
    // A read-only file opens without complaint and fails on the first write: find out
    // now, rather than with an error every second from the background sweep.
    db.pragma(`user_version = ${db.pragma('user_version', { simple: true }) as number}`);
    return { db, lock };
  } catch (e) {
    db?.close();
    lock?.release();
    // Best effort: where nothing could be created, nothing can be removed either.
    const remove = (f: string) => {
      try {
        rmSync(f, { recursive: true, force: true });
      } catch {
        /* see above */
      }
    };
    for (const [i, f] of files.entries()) if (!existed[i]) remove(f);
    if (createdDir) remove(createdDir);
    else if (lock?.created) remove(lock.path);
    throw sqliteOpenError(path, e);
  }
}

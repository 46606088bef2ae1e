import type Database from 'better-sqlite3';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase } from './driver.js';

/** The side file whose lock says which process owns a data directory. */
const LOCK_FILE = 'redrive.lock';

class DirectoryInUse extends Error {
  override readonly name = 'DirectoryInUse';
}

/**
 * One server per data directory. Two processes on one SQLite file would each miss the
 * other's wake-ups (a long poll sleeps through a message sent through the other), so
 * the second one is refused.
 *
 * The lock is SQLite's own on a side file: the holder keeps a write transaction open
 * (a RESERVED lock, an fcntl lock underneath), which the kernel drops when the process
 * dies however it dies, so a SIGKILLed server leaves nothing that blocks the next start.
 * A pid file checked for liveness would not do: in a container the restarted server
 * often gets the very pid the killed one had, and would find "itself" holding the lock.
 * A RESERVED lock still lets others read, so the one refused reads the holder's pid.
 * The lock is not on redrive.db itself because the checkpoint worker's connection
 * needs to write it. Like every fcntl lock, it needs a local file system (not NFS).
 */
export class DirectoryLock {
  private constructor(
    private readonly db: Database.Database,
    /** The lock file did not exist before: a start that fails removes it again. */
    readonly created: boolean,
    readonly path: string,
  ) {}

  static acquire(dir: string): DirectoryLock {
    const path = join(dir, LOCK_FILE);
    const created = !existsSync(path);
    const db = openDatabase(path, { timeout: 0 });
    try {
      db.exec('CREATE TABLE IF NOT EXISTS holder (pid INTEGER NOT NULL, since INTEGER NOT NULL)');
      const holder = () => (db.prepare('SELECT pid FROM holder').get() as { pid: number } | undefined)?.pid;
      const take = () => {
        try {
          db.exec('BEGIN IMMEDIATE');
        } catch (e) {
          if ((e as { code?: string }).code !== 'SQLITE_BUSY') throw e;
          const pid = holder();
          throw new DirectoryInUse(
            `${dir} is in use by another Redrive server${pid === undefined ? '' : ` (pid ${pid})`}: ` +
              'stop that server first, or give this one another data directory',
          );
        }
      };
      take();
      // Others read only what is committed, so the pid is committed and the lock taken
      // again; should another start slip in between, the one that then holds it makes
      // sure the row names it.
      while (holder() !== process.pid) {
        db.exec(`DELETE FROM holder; INSERT INTO holder VALUES (${process.pid}, ${Date.now()}); COMMIT`);
        take();
      }
      return new DirectoryLock(db, created, path);
    } catch (e) {
      db.close();
      if (created && !(e instanceof DirectoryInUse)) rmSync(path, { force: true });
      throw e;
    }
  }

  release(): void {
    if (this.db.open) this.db.close();
  }
}

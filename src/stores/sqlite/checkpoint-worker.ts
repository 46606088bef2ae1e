import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase } from './driver.js';

/** The checkpointer's thread (see checkpointer.ts): a PASSIVE checkpoint on a timer. */
const { path, synchronous, intervalMs } = workerData as { path: string; synchronous: string; intervalMs: number };
const db = openDatabase(path);
// Same synchronous setting as the serving connection: a checkpoint fsyncs the database
// file unless synchronous is OFF.
db.pragma(`synchronous = ${synchronous}`);
db.pragma('busy_timeout = 1000');
const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // Busy or failing I/O (disk full): the next tick tries again.
  }
}, intervalMs);
parentPort!.on('message', (m) => {
  if (m !== 'close') return;
  clearInterval(timer);
  db.close();
  parentPort!.close();
});

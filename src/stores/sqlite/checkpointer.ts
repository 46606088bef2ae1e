import { Worker } from 'node:worker_threads';

/** How often the worker copies the write-ahead log into the database file. */
const INTERVAL_MS = 200;
/**
 * The serving connection checkpoints by itself only past this many WAL pages (16 MiB):
 * a fallback should the worker fall behind or die, never the usual path.
 */
export const FALLBACK_CHECKPOINT_PAGES = 4096;

/**
 * Checkpoints the WAL from a worker thread with its own connection. SQLite otherwise
 * checkpoints inside whichever commit crosses wal_autocheckpoint: on the event loop,
 * with an fsync, while every request waits. A PASSIVE checkpoint never blocks the
 * writer, and durability does not change: a commit is durable once in the WAL.
 */
export class Checkpointer {
  private readonly worker: Worker;
  private readonly exited: Promise<void>;

  constructor(path: string, synchronous: string) {
    this.worker = new Worker(new URL('./checkpoint-worker.js', import.meta.url), {
      workerData: { path, synchronous, intervalMs: INTERVAL_MS },
    });
    // The worker never keeps the process alive, and its failure only brings back
    // checkpoints on the serving connection (the fallback above).
    this.worker.unref();
    this.worker.on('error', () => {});
    this.exited = new Promise((resolve) => this.worker.once('exit', () => resolve()));
  }

  /** Stops the worker and closes its connection, so the store's close is the last. */
  close(): Promise<void> {
    // Held until it has exited: an unreferenced worker's exit would not keep the
    // process waiting for it.
    this.worker.ref();
    this.worker.postMessage('close');
    return this.exited;
  }
}

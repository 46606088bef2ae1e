import type { QueueRecord } from '../engine/kernel/types.js';

/**
 * Queue records by account and name, so that resolving a queue URL, which every request
 * does, costs no round trip. Every write to a queue row drops its entry.
 *
 * SQLite: this process is the database's only writer, so the cache is always exact.
 * PostgreSQL: another node may change a queue at any time, so the cache is only used
 * while the node's LISTEN connection is up (`enabled`): every change to a queue row
 * sends a NOTIFY, and the entry is dropped when it arrives. A reconnect clears
 * everything, since notifications may have been missed meanwhile.
 */
export class QueueCache {
  private readonly byName = new Map<string, QueueRecord>();
  /**
   * Every queue, for the readers that need them all (the console's overview, the metrics'
   * queue gauges, dead-letter source look-ups): building 100,000 records from rows takes
   * about 0.4 s, and the settings the engine derives from each record are kept per record.
   * So a change to a few queues reloads those rows only (`stale`), and every other record,
   * of this account or another, stays the same object.
   */
  private everyQueue?: readonly QueueRecord[];
  private records?: Map<number, QueueRecord>;
  /** Queues changed, created or deleted since `records` was read. */
  private readonly stale = new Set<number>();
  /** Bumped on every invalidation, so a read that raced one is not cached. */
  private generation = 0;
  constructor(public enabled: boolean) {}

  /** The read of `all` under way: the others wait for it, then read what changed meanwhile. */
  private reading?: Promise<readonly QueueRecord[]>;

  /**
   * Every queue, in id order: `load` reads them all, `loadIds` the rows of some (a
   * deleted one has none). Past a few changed queues, reading them all is as cheap.
   */
  async all(
    load: () => Promise<QueueRecord[]>,
    loadIds: (ids: number[]) => Promise<QueueRecord[]>,
  ): Promise<readonly QueueRecord[]> {
    for (;;) {
      if (!this.enabled) return load();
      if (this.reading) {
        await this.reading.catch(() => undefined);
        continue;
      }
      if (this.everyQueue && this.stale.size === 0) return this.everyQueue;
      this.reading = this.read(load, loadIds);
      try {
        return await this.reading;
      } finally {
        this.reading = undefined;
      }
    }
  }

  private async read(
    load: () => Promise<QueueRecord[]>,
    loadIds: (ids: number[]) => Promise<QueueRecord[]>,
  ): Promise<readonly QueueRecord[]> {
    const records = this.records;
    if (records && this.stale.size <= Math.max(MIN_INCREMENTAL, records.size / 10)) {
      const ids = [...this.stale];
      this.stale.clear();
      // A queue changed during the read is marked stale again, and read again next time.
      const fresh = await loadIds(ids);
      if (this.records !== records) return this.read(load, loadIds);
      for (const id of ids) records.delete(id);
      for (const q of fresh) records.set(q.id, frozen(q));
      const queues = [...records.values()];
      // Ids are drawn in creation order; a queue created on another node may come late.
      if (queues.some((q, i) => i > 0 && q.id < queues[i - 1]!.id)) queues.sort((a, b) => a.id - b.id);
      this.everyQueue = Object.freeze(queues);
      return this.everyQueue;
    }
    const generation = this.generation;
    const queues = await load();
    if (generation !== this.generation) return queues;
    for (const q of queues) frozen(q);
    this.records = new Map(queues.map((q) => [q.id, q]));
    this.stale.clear();
    this.everyQueue = Object.freeze(queues);
    return this.everyQueue;
  }

  /** The cached record, without loading it (undefined when absent or the cache is off). */
  peek(key: string): QueueRecord | undefined {
    return this.enabled ? this.byName.get(key) : undefined;
  }

  async get(key: string, load: () => Promise<QueueRecord | undefined>): Promise<QueueRecord | undefined> {
    if (this.enabled) {
      const hit = this.byName.get(key);
      if (hit) return hit;
    }
    const generation = this.generation;
    const queue = await load();
    if (!queue || !this.enabled || generation !== this.generation) return queue;
    this.byName.set(key, frozen(queue));
    return queue;
  }

  /** Drops what is cached of queue `id`; also called for a queue just created, which `all` lacks. */
  forget(id: number): void {
    this.generation++;
    this.stale.add(id);
    for (const [key, q] of this.byName) if (q.id === id) this.byName.delete(key);
  }

  clear(): void {
    this.generation++;
    this.everyQueue = undefined;
    this.records = undefined;
    this.stale.clear();
    this.byName.clear();
  }
}

/** Below this many changed queues, `all` reads only theirs. */
const MIN_INCREMENTAL = 100;

/** Frozen, because every caller shares the cached record. */
function frozen(q: QueueRecord): QueueRecord {
  Object.freeze(q.attributes);
  Object.freeze(q.tags);
  return Object.freeze(q);
}

import type { QueueRecord } from '../engine/types.js';

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
   * about 0.4 s, which every refresh and scrape would pay. Dropped by any change to any
   * queue row, including a creation.
   */
  private everyQueue?: readonly QueueRecord[];
  /** Bumped on every invalidation, so a read that raced one is not cached. */
  private generation = 0;
  constructor(public enabled: boolean) {}

  async all(load: () => Promise<QueueRecord[]>): Promise<readonly QueueRecord[]> {
    if (this.enabled && this.everyQueue) return this.everyQueue;
    const generation = this.generation;
    const queues = await load();
    if (!this.enabled || generation !== this.generation) return queues;
    for (const q of queues) {
      Object.freeze(q.attributes);
      Object.freeze(q.tags);
      Object.freeze(q);
    }
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
    // Frozen, because every caller shares the cached record.
    Object.freeze(queue.attributes);
    Object.freeze(queue.tags);
    this.byName.set(key, Object.freeze(queue));
    return queue;
  }

  /** Drops what is cached of queue `id`; also called for a queue just created, which `all` lacks. */
  forget(id: number): void {
    this.generation++;
    this.everyQueue = undefined;
    for (const [key, q] of this.byName) if (q.id === id) this.byName.delete(key);
  }

  clear(): void {
    this.generation++;
    this.everyQueue = undefined;
    this.byName.clear();
  }
}

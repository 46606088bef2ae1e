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
  /** Bumped on every invalidation, so a read that raced one is not cached. */
  private generation = 0;
  constructor(public enabled: boolean) {}

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

  forget(id: number): void {
    this.generation++;
    for (const [key, q] of this.byName) if (q.id === id) this.byName.delete(key);
  }

  clear(): void {
    this.generation++;
    this.byName.clear();
  }
}

/**
 * This process's long-poll listeners per queue: `wake` calls every listener of a queue.
 * Each store's wakeups.ts decides when to wake (after the commit that made messages
 * available) and, for a shared store, carries wake-ups to other nodes.
 */
export class WakeupListeners {
  private readonly listeners = new Map<number, Set<() => void>>();

  subscribe(queueId: number, listener: () => void): () => void {
    let set = this.listeners.get(queueId);
    if (!set) this.listeners.set(queueId, (set = new Set()));
    set.add(listener);
    return () => {
      set!.delete(listener);
      if (set!.size === 0) this.listeners.delete(queueId);
    };
  }

  /** Queues with at least one listener. */
  queueIds(): number[] {
    return [...this.listeners.keys()];
  }

  wake(queueId: number): void {
    const set = this.listeners.get(queueId);
    if (!set) return;
    for (const l of [...set]) l();
  }
}

/** In-process wake-up channel: listeners per queue, called when messages may be available. */
export class Wakeups {
  private readonly listeners = new Map<number, Set<() => void>>();

  on(queueId: number, listener: () => void): () => void {
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

  fire(queueId: number): void {
    const set = this.listeners.get(queueId);
    if (!set) return;
    for (const l of [...set]) l();
  }
}

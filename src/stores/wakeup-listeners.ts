import type { NewMessage } from '../engine/kernel/types.js';

interface Subscription {
  wake: (count?: number) => void;
  /** What the subscriber's receives would take if woken now (WakeupStore.subscribe). */
  capacity?: () => number;
}

/**
 * This process's long-poll listeners per queue: `wake` calls every listener of a queue.
 * Each store's wakeups.ts decides when to wake (after the commit that made messages
 * available) and, for a shared store, carries wake-ups to other nodes.
 */
export class WakeupListeners {
  private readonly listeners = new Map<number, Set<Subscription>>();

  subscribe(queueId: number, listener: (count?: number) => void, capacity?: () => number): () => void {
    let set = this.listeners.get(queueId);
    if (!set) this.listeners.set(queueId, (set = new Set()));
    const subscription: Subscription = { wake: listener, capacity };
    set.add(subscription);
    return () => {
      set!.delete(subscription);
      if (set!.size === 0) this.listeners.delete(queueId);
    };
  }

  /** Queues with at least one listener. */
  queueIds(): number[] {
    return [...this.listeners.keys()];
  }

  /** `count`: how many messages the wake-up made ready, when known (WakeupStore.subscribe). */
  wake(queueId: number, count?: number): void {
    const set = this.listeners.get(queueId);
    if (!set) return;
    for (const s of [...set]) s.wake(count);
  }

  /** How many messages of the queue this process's listeners would take if woken now. */
  capacity(queueId: number): number {
    let n = 0;
    for (const s of this.listeners.get(queueId) ?? []) n += s.capacity?.() ?? 0;
    return n;
  }
}

/**
 * How many of these just-stored messages a receive can take now, for a counted wake-up
 * (WakeupStore.subscribe); undefined if one is delayed, whose time a woken receive must
 * read to arm the long polls' timer, or is a FIFO message, which its group may hold back.
 */
export function readyCount(messages: readonly NewMessage[]): number | undefined {
  return messages.some((m) => m.visibleAt > m.sentAt || m.dedupId !== undefined) ? undefined : messages.length;
}

/** Two ready counts added up, for one wake-up of a queue: unknown if either is. */
export function addReady(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined || b === undefined ? undefined : a + b;
}

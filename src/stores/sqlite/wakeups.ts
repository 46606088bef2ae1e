import type { WakeupStore } from '../../engine/store/wakeups.js';
import { addReady, WakeupListeners } from '../wakeup-listeners.js';

/**
 * Wake-ups in one process: an operation marks the queues it made messages available in
 * (`wakeAfterCommit`), and they are woken once its group commit has committed, so a
 * woken receive always finds the messages. A rolled-back mark only wakes a receive that
 * then finds nothing and waits again.
 */
export class SqliteWakeups implements WakeupStore {
  private readonly listeners = new WakeupListeners();
  /** Queues to wake, with how many messages were made ready (undefined: not known). */
  private readonly due = new Map<number, number | undefined>();

  subscribe(queueId: number, listener: (count?: number) => void): () => void {
    return this.listeners.subscribe(queueId, listener);
  }

  /** `count`: the messages made ready to receive, when known (WakeupStore.subscribe). */
  wakeAfterCommit(queueId: number, count?: number): void {
    this.due.set(queueId, addReady(this.due.has(queueId) ? this.due.get(queueId) : 0, count));
  }

  /** The group commit committed: wake every marked queue. */
  committed(): void {
    if (this.due.size === 0) return;
    const due = [...this.due];
    this.due.clear();
    for (const [id, count] of due) this.listeners.wake(id, count);
  }
}

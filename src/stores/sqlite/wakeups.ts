import type { WakeupStore } from '../../engine/store/wakeups.js';
import { WakeupListeners } from '../wakeup-listeners.js';

/**
 * Wake-ups in one process: an operation marks the queues it made messages available in
 * (`wakeAfterCommit`), and they are woken once its group commit has committed, so a
 * woken receive always finds the messages. A rolled-back mark only wakes a receive that
 * then finds nothing and waits again.
 */
export class SqliteWakeups implements WakeupStore {
  private readonly listeners = new WakeupListeners();
  private readonly due = new Set<number>();

  subscribe(queueId: number, listener: () => void): () => void {
    return this.listeners.subscribe(queueId, listener);
  }

  wakeAfterCommit(queueId: number): void {
    this.due.add(queueId);
  }

  /** The group commit committed: wake every marked queue. */
  committed(): void {
    if (this.due.size === 0) return;
    const ids = [...this.due];
    this.due.clear();
    for (const id of ids) this.listeners.wake(id);
  }
}

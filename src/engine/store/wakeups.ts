/**
 * Wake-ups: the store tells long polls that messages of a queue may have become
 * available (a send, a visibility change to 0, a dead-letter move, a released FIFO
 * group). A shared store carries them between nodes.
 */
export interface WakeupStore {
  /** Calls `listener` on every wake-up of the queue; returns the unsubscribe function. */
  subscribe(queueId: number, listener: () => void): () => void;
}

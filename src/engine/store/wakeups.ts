/**
 * Wake-ups: the store tells long polls that messages of a queue may have become
 * available (a send, a visibility change to 0, a dead-letter move, a released FIFO
 * group). A shared store carries them between nodes.
 */
export interface WakeupStore {
  /**
   * Calls `listener` on every wake-up of the queue; returns the unsubscribe function. A
   * wake-up that knows how many messages it made ready to receive (a standard send) gives
   * `count`; others (a visibility change, a move, a FIFO send, another node) give none.
   * `capacity` says how many messages the listener's receives would take if woken now
   * (0 when none would): a shared store need not tell other nodes of messages this node
   * will take itself.
   */
  subscribe(queueId: number, listener: (count?: number) => void, capacity?: () => number): () => void;
}

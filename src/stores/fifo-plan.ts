import type { StoredMessage } from '../engine/types.js';
import type { ReceiveRequest } from './store.js';

export interface FifoPlan {
  /** Messages to hand out, in order. */
  claim: StoredMessage[];
  /** Messages received too often: they move to the dead-letter queue. */
  deadLetter: StoredMessage[];
}

/**
 * Decides a FIFO receive over the heads of the available groups (each in position
 * order, oldest group first): as many messages of one group as possible, in order. A
 * delayed or in-flight message stops its group, since nothing behind it may go first; a
 * poison message is dead-lettered and its group flows on; one past retention is skipped
 * and left to the sweep. Pure, so every store decides alike.
 */
export function planFifoReceive(groups: StoredMessage[][], req: Pick<ReceiveRequest, 'now' | 'retentionCutoff' | 'deadLetter'>, room: number): FifoPlan {
  const plan: FifoPlan = { claim: [], deadLetter: [] };
  for (const rows of groups) {
    for (const m of rows) {
      if (plan.claim.length >= room) return plan;
      if (m.visibleAt > req.now) break;
      const dl = req.deadLetter;
      if (dl && m.receiveCount >= dl.maxReceiveCount) {
        plan.deadLetter.push(m);
        continue;
      }
      if (m.sentAt < req.retentionCutoff) continue;
      plan.claim.push(m);
    }
  }
  return plan;
}

import type { StoredMessage } from '../kernel/types.js';
import { overReceiveLimit } from './dead-letters.js';
import type { ReceiveRequest } from './messages.js';

/** What the planner reads of a message: a store may pass whole messages or just this. */
export type GroupHead = Pick<StoredMessage, 'seq' | 'visibleAt' | 'receiveCount' | 'sentAt'>;

export interface FifoPlan<M extends GroupHead = StoredMessage> {
  /** Messages to hand out, in order. */
  claim: M[];
  /** Messages received too often: they move to the dead-letter queue. */
  deadLetter: M[];
}

/**
 * Decides a FIFO receive over the heads of the available groups (each in position
 * order, oldest group first): as many messages of one group as possible, in order. A
 * delayed or in-flight message stops its group, since nothing behind it may go first; a
 * poison message is dead-lettered and its group flows on; one past retention is skipped
 * and left to the sweep. Pure, so every store decides alike; `groups` may be lazy, so a
 * store reads no further than the plan needs.
 */
export function planFifoReceive<M extends GroupHead>(
  groups: Iterable<M[]>,
  req: Pick<ReceiveRequest, 'now' | 'retentionCutoff' | 'deadLetter'>,
  room: number,
): FifoPlan<M> {
  const plan: FifoPlan<M> = { claim: [], deadLetter: [] };
  for (const rows of groups) {
    for (const m of rows) {
      if (plan.claim.length >= room) return plan;
      if (m.visibleAt > req.now) break;
      if (overReceiveLimit(req.deadLetter, m.receiveCount)) {
        plan.deadLetter.push(m);
        continue;
      }
      if (m.sentAt < req.retentionCutoff) continue;
      plan.claim.push(m);
    }
  }
  return plan;
}

import type { QueueRecord, StoredMessage } from '../types.js';
import type { MoveBatch, MoveById, MoveByIdResult, MoveTaskStatus } from './move-tasks.js';

export interface MovePlan {
  /** Messages to move, each with its destination queue. */
  moves: { message: StoredMessage; destination: QueueRecord }[];
  /** The position the task has examined up to. */
  cursor: number;
  status: MoveTaskStatus;
  failureReason: string | null;
}

/**
 * Decides one batch of a move task over `rows`, the source's messages after the task's
 * cursor in position order (at most `batch.scanLimit`). In-flight or delayed messages
 * and those the filter rejects stay where they are, as SQS's own receive would leave
 * them; a destination that no longer exists fails the task at that message.
 * `resolve` finds a message's destination queue. Pure, so every store
 * decides alike.
 */
export function planMoveBatch(
  rows: StoredMessage[], cursor: number, batch: MoveBatch,
  resolve: (m: StoredMessage) => QueueRecord | undefined,
): MovePlan {
  const plan: MovePlan = { moves: [], cursor, status: 'RUNNING', failureReason: null };
  for (const m of rows) {
    if (plan.moves.length >= batch.limit) return plan;
    if (m.visibleAt > batch.now || !batch.matches(m)) {
      plan.cursor = m.seq;
      continue;
    }
    const destination = resolve(m);
    if (!destination) return { ...plan, status: 'FAILED', failureReason: batch.missingQueueReason };
    plan.moves.push({ message: m, destination });
    plan.cursor = m.seq;
  }
  if (rows.length < batch.scanLimit) plan.status = 'COMPLETED';
  return plan;
}

/**
 * Decides the move of one message by id (MoveMessagesById), found or not: the same rules
 * as a task's batch, for one message the operator chose. Pure, so every store decides alike.
 */
export function planMoveById(
  id: string, m: StoredMessage | undefined, move: MoveById, resolve: (m: StoredMessage) => QueueRecord | undefined,
): MoveByIdResult {
  if (!m) return { id, outcome: 'notFound' };
  if (!move.matches(m)) return { id, outcome: 'refused', message: m };
  const destination = resolve(m);
  if (!destination) return { id, outcome: 'noDestination', message: m };
  return { id, outcome: 'moved', message: m, destination };
}

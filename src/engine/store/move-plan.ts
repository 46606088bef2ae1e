import type { QueueAddress } from '../kernel/addressing.js';
import type { QueueRecord, StoredMessage } from '../kernel/types.js';
import type {
  Destination,
  MoveBatch,
  MoveBatchResult,
  MoveById,
  MoveByIdResult,
  MoveTaskStatus,
} from './move-tasks.js';

/**
 * Where a task may write: its owner's account, its source's region and type. Every
 * destination (the task's DestinationArn, or each message's DeadLetterQueueSourceArn,
 * which an import may have set) is held to it at every batch, so a queue deleted,
 * recreated or never the owner's is never written to (docs/security.md).
 */
export interface MoveScope {
  accountId: string;
  region: string;
  fifo: boolean;
}

/** The address, if a task of `scope` may write there; the store looks it up only then, and only with the scope's type. */
export function scopedAddress(scope: MoveScope, a: QueueAddress | undefined): QueueAddress | undefined {
  return a && a.accountId === scope.accountId && a.region === scope.region ? a : undefined;
}

/** Whether a queue the store found is one the task may write to. */
function inScope(scope: MoveScope, q: Pick<QueueRecord, 'accountId' | 'region' | 'fifo'>): boolean {
  return q.accountId === scope.accountId && q.region === scope.region && q.fifo === scope.fifo;
}

export interface MovePlan {
  /** Messages to move, each with its destination queue. */
  moves: { message: StoredMessage; destination: QueueRecord }[];
  /** The position the task has examined up to. */
  cursor: number;
  status: MoveTaskStatus;
  failureReason: string | null;
  /** The message a FAILED plan stopped at, for the log. */
  failedAt?: StoredMessage;
}

/**
 * Decides one batch of a move task over `rows`, the source's messages after the task's
 * cursor in position order (at most `batch.scanLimit`). In-flight or delayed messages
 * and those the filter rejects stay where they are, as SQS's own receive would leave
 * them. A destination that does not exist, or is outside the task's scope (another
 * account or region, the other type), fails the task at that message, which stays where
 * it is: SQS fails a redrive whose destination is gone the same way, and a queue of
 * another account is, to the task's owner, a queue that does not exist.
 * A destination that would refuse the message (`batch.refusal`: too large for it) fails the
 * task at that message too. `lookup` finds a queue by address; pure otherwise, so every
 * store decides alike.
 */
export function planMoveBatch(
  rows: StoredMessage[],
  cursor: number,
  batch: MoveBatch,
  scope: MoveScope,
  lookup: (a: QueueAddress) => QueueRecord | undefined,
): MovePlan {
  const plan: MovePlan = { moves: [], cursor, status: 'RUNNING', failureReason: null };
  let examined = 0;
  for (const m of rows) {
    if (plan.moves.length >= batch.limit) return plan;
    // Bounds a filter's work (a JSON path parses every body) per batch, which runs in one transaction.
    if (batch.scanBytes !== undefined && examined >= batch.scanBytes) return plan;
    examined += m.body.length;
    if (m.visibleAt > batch.now || !batch.matches(m)) {
      plan.cursor = m.seq;
      continue;
    }
    const a = scopedAddress(scope, batch.destination(m));
    const destination = a && lookup(a);
    if (!destination || !inScope(scope, destination))
      return { ...plan, status: 'FAILED', failureReason: batch.missingQueueReason, failedAt: m };
    const refused = batch.refusal?.(m, destination);
    if (refused) return { ...plan, status: 'FAILED', failureReason: refused, failedAt: m };
    plan.moves.push({ message: m, destination });
    plan.cursor = m.seq;
  }
  if (rows.length < batch.scanLimit) plan.status = 'COMPLETED';
  return plan;
}

/** The store's result of a batch, with the message a failed plan stopped at. */
export function withFailure(done: MoveBatchResult, plan: MovePlan): MoveBatchResult {
  return plan.failedAt
    ? {
        ...done,
        failedAt: { messageId: plan.failedAt.messageId, deadLetterSourceArn: plan.failedAt.deadLetterSourceArn },
      }
    : done;
}

/** How many of a plan's moves go to each destination queue, in the order first met. */
export function destinationsOf(moves: MovePlan['moves']): Destination[] {
  const byId = new Map<number, Destination>();
  for (const { destination } of moves) {
    const d = byId.get(destination.id);
    if (d) d.count++;
    else byId.set(destination.id, { queue: destination, count: 1 });
  }
  return [...byId.values()];
}

/**
 * Decides the move of one message by id (MoveMessagesById), found or not: the same rules
 * as a task's batch, scope included, for one message the operator chose. Pure, so every
 * store decides alike.
 */
export function planMoveById(
  id: string,
  m: StoredMessage | undefined,
  move: MoveById,
  scope: MoveScope,
  lookup: (a: QueueAddress) => QueueRecord | undefined,
): MoveByIdResult {
  if (!m) return { id, outcome: 'notFound' };
  if (!move.matches(m)) return { id, outcome: 'refused', message: m };
  const a = scopedAddress(scope, move.destination(m));
  const destination = a && lookup(a);
  if (!destination || !inScope(scope, destination)) return { id, outcome: 'noDestination', message: m };
  return { id, outcome: 'moved', message: m, destination };
}

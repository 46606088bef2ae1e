import type { Death, DeathReason, MessageAttributes, StoredMessage } from '../kernel/types.js';
import type { ReceiptOutcome, ReceiptRef } from './receipts.js';
import type { NewQueue } from './queues.js';

/**
 * Dead-lettering for the reasons that are not a receive: rejection and expiry (a
 * message's time-to-live). A receive dead-letters through ReceiveRequest.deadLetter and
 * a limited send through LengthLimit.deadLetter, with the same target.
 */
export interface DeadLetterStore {
  /**
   * Dead-letters the message of a current receipt (still in flight, latest token) to
   * `target` in one step: 'ok', or why not ('stale', 'lapsed', 'gone').
   */
  reject(queueId: number, receipt: ReceiptRef, now: number, target: DeadLetterTarget): Promise<RejectResult>;
  /**
   * One atomic batch of expiry: up to `limit` ready messages of the queue whose
   * `expiresAt` has passed are dead-lettered to `target`, or dropped without one.
   */
  expire(queueId: number, now: number, limit: number, target: DeadLetterTarget | undefined): Promise<DeadLettered[]>;
  /**
   * The queue's dead-lettered messages (those with a dead-letter source) counted by
   * source queue ARN and latest death reason, with the first and last dead-letter
   * time of each. Read from an index of dead-lettered messages, not from their bodies.
   */
  breakdown(queueId: number): Promise<BreakdownRow[]>;
}

export interface BreakdownRow {
  sourceArn: string;
  /** The reason of the message's latest death; null if it has no history. */
  reason: string | null;
  count: number;
  oldest: number;
  newest: number;
}

/**
 * Where a dead-lettered message goes and how dead-lettering changes it. `arrival` is
 * pure: a store may run it again when it retries a transaction, so anything to log or
 * count is done by the engine with what the operation returns (DeadLettered).
 */
export interface DeadLetterTarget {
  queueId: number;
  reason: DeathReason;
  /** The message as it arrives (timestamps, ids, source, history), or that it closes a cycle. */
  arrival(message: StoredMessage): DeadLetterArrival;
  /**
   * Where a message that would close a dead-letter cycle with no rejection in it is
   * parked. The store creates this queue, if it does not exist, in the same transaction.
   */
  cyclesQueue?: NewQueue;
}

/** Where and how a message that has been received too often is moved on its next receive. */
export interface DeadLetterRule extends DeadLetterTarget {
  maxReceiveCount: number;
}

/**
 * SQS's maxReceiveCount rule, the one place it is decided: a message already received
 * `maxReceiveCount` times is dead-lettered by the receive that would deliver it again.
 * The stores execute it (PostgreSQL's receive queries state the same comparison in SQL,
 * with `rule.maxReceiveCount` as their parameter).
 */
export function overReceiveLimit(rule: DeadLetterRule | undefined, receiveCount: number): rule is DeadLetterRule {
  return rule !== undefined && receiveCount >= rule.maxReceiveCount;
}

/** What every dead-lettered message keeps or is given, whichever way it goes. */
interface ArrivalFields {
  sentAt: number;
  deadLetterSourceArn: string;
  /** The message's history with this death recorded; undefined leaves it as it is. */
  deaths?: Death[];
  /** Its receive count from now on; undefined keeps it (0 when a queue is its own DLQ). */
  receiveCount?: number;
}

/**
 * The message moves, keeping its row: `move` into target.queueId, `cycle` into
 * target.cyclesQueue because going on would close a dead-letter cycle with no rejection.
 */
export interface DeadLetterMove extends ArrivalFields {
  kind: 'move' | 'cycle';
  dedupId?: string;
  /** Its new expiry (the destination's own TTL); undefined: none, the old TTL is removed. */
  expiresAt?: number;
}

/**
 * AMQP dead-letter exchanges: the message leaves its queue and a copy arrives in each of
 * `copies` (none: it is dropped), in the same transaction, so a crash loses or duplicates
 * none. The common fields apply to every copy; target.queueId is not used.
 */
export interface DeadLetterCopies extends ArrivalFields {
  kind: 'copies';
  copies: DeadLetterCopy[];
  /** Queues left out because the copy would close a cycle with no rejection (RabbitMQ drops it). */
  cycles: number;
  /** Copies not made because the message's copy budget was spent (dead-letter-exchange.ts). */
  overBudget?: number;
}

/** How one message is dead-lettered: moved (to the target or, breaking a cycle, the cycles queue) or copied. */
export type DeadLetterArrival = DeadLetterMove | DeadLetterCopies;

/** One copy of a message dead-lettered through an AMQP exchange. */
export interface DeadLetterCopy {
  queueId: number;
  messageId: string;
  /** Replaces the message's system attributes (its AMQP envelope: exchange, keys). */
  systemAttributes?: MessageAttributes;
  /** The destination queue's own TTL, from arrival. */
  expiresAt?: number;
}

/** A copied message as inserted: a new message in its queue, at the end, never received. */
export function copiedMessage(m: StoredMessage, a: DeadLetterCopies, c: DeadLetterCopy, now: number): StoredMessage {
  return {
    ...m,
    messageId: c.messageId,
    systemAttributes: c.systemAttributes ?? m.systemAttributes,
    sentAt: now,
    visibleAt: now,
    dedupId: undefined,
    deadLetterSourceArn: a.deadLetterSourceArn,
    deaths: a.deaths ?? m.deaths,
    expiresAt: c.expiresAt,
    receiveCount: a.receiveCount ?? m.receiveCount,
  };
}

/** What a copying arrival did, as the operation reports it: each copy, each cycle, or one drop. */
export function copyOutcomes(m: StoredMessage, a: DeadLetterCopies, reason: DeathReason): DeadLettered[] {
  const out: DeadLettered[] = a.copies.map((c) => ({
    kind: 'moved',
    messageId: c.messageId,
    from: m.queueId,
    to: c.queueId,
    reason,
  }));
  for (let i = 0; i < a.cycles; i++) out.push({ kind: 'cycle', messageId: m.messageId, from: m.queueId, reason });
  for (let i = 0; i < (a.overBudget ?? 0); i++)
    out.push({ kind: 'over-budget', messageId: m.messageId, from: m.queueId, reason });
  if (out.length === 0) out.push({ kind: 'dropped', messageId: m.messageId, from: m.queueId, reason });
  return out;
}

/** A queue length limit applied by a send (see MessageStore.send). */
export interface LengthLimit {
  maxMessages?: number;
  /** Bytes of message bodies, as RabbitMQ's max-length-bytes counts them. */
  maxBytes?: number;
  overflow: 'drop-head' | 'reject-publish';
  /** Where drop-head sends the messages it pushes out; without one they are dropped. */
  deadLetter?: DeadLetterTarget;
}

/**
 * One message that an operation dead-lettered: `moved` to a dead-letter queue (or a copy
 * of it made there), `cycle` when going on would have closed a dead-letter cycle with no
 * rejection in it (parked in the cycles queue `to`, or, for an AMQP copy, not made, as
 * RabbitMQ drops it), `dropped` for want of a target, `over-budget` for a dead-letter
 * exchange's copy not made because the event's copies were all spent.
 */
export interface DeadLettered {
  kind: 'moved' | 'cycle' | 'dropped' | 'over-budget';
  messageId: string;
  /** The queue it left. */
  from: number;
  /** The queue it went to: set when moved, and when a cycle parked it. */
  to?: number;
  reason: DeathReason;
}

export interface RejectResult {
  outcome: ReceiptOutcome;
  deadLettered: DeadLettered[];
}

import type { MessageCounts, NewMessage, QueueDepth, StoredMessage } from '../kernel/types.js';
import type { DeadLettered, DeadLetterRule, LengthLimit } from './dead-letters.js';
import type { DeleteRule, ReceiptOutcome, ReceiptRef, VisibilityChange } from './receipts.js';
import type { NoisyGroups } from './standard-plan.js';

export type { DeleteRule, ReceiptOutcome, ReceiptRef, VisibilityChange } from './receipts.js';

export interface MessageStore {
  /**
   * Stores the messages. With `limit`, the queue's length is kept within it in the same
   * transaction: the oldest ready messages are dead-lettered (drop-head), or a message
   * that does not fit is not stored and comes back with `rejected` (reject-publish, or
   * drop-head with nothing ready to drop).
   */
  send(queueId: number, messages: NewMessage[], limit?: LengthLimit): Promise<SendResult>;
  receive(queueId: number, request: ReceiveRequest): Promise<ReceiveResult>;
  delete(queueId: number, receipts: ReceiptRef[], rule: DeleteRule): Promise<ReceiptOutcome[]>;
  changeVisibility(queueId: number, changes: VisibilityChange[], now: number): Promise<ReceiptOutcome[]>;
  /**
   * Each queue's depth, for many queues in one call (metrics, the console's overview).
   * Reads indexes only: a queue's total comes from its maintained depth where it has a
   * length limit, else from a count over its index range; in flight and delayed from the
   * hidden range; the oldest message from the age index. Unknown ids are left out.
   */
  depths(queueIds: readonly number[], now: number): Promise<Map<number, QueueDepth>>;
  /**
   * The queue's messages in flight, in all and by message group (groups with none left
   * out): fair queues, and the in-flight limit of a receive. Reads the hidden range only.
   */
  inflightByGroup(queueId: number, now: number): Promise<GroupInflight>;
  /** Fair queues: the counts and oldest message of the queue's messages outside these groups. */
  quietDepth(
    queueId: number,
    noisy: readonly string[],
    now: number,
  ): Promise<MessageCounts & { oldestSentAt?: number }>;
  /** The earliest time after `now` at which a message of the queue becomes visible. */
  nextVisibleAt(queueId: number, now: number): Promise<number | undefined>;
  /**
   * Deletes the queue's messages with these ids whatever their state (visible, in
   * flight or delayed); returns the ids it deleted. Counted as deletes at `now`.
   */
  deleteByIds(queueId: number, messageIds: readonly string[], now: number): Promise<string[]>;
  /** Messages by position after `afterSeq`, untouched: receive counts and visibility stay as they are. */
  peek(queueId: number, afterSeq: number, limit: number): Promise<StoredMessage[]>;
}

export interface SendResult {
  /** One per message sent, in order (see StoredMessage.duplicate and .rejected). */
  messages: StoredMessage[];
  /** What drop-head pushed out to make room. */
  deadLettered: DeadLettered[];
}

export interface ReceiveRequest {
  now: number;
  max: number;
  visibilityTimeoutMs: number;
  /** Messages sent before this are past retention and never returned. */
  retentionCutoff: number;
  newToken: () => string;
  deadLetter?: DeadLetterRule;
  /** Standard queues: the noisy groups, whose messages come after the quiet groups' (standard-plan.ts). */
  noisy?: NoisyGroups;
  /** FIFO: receive by message group, in order, one holder per group at a time. */
  fifo?: boolean;
  /** FIFO ReceiveRequestAttemptId: a retry until `attemptUntil` replays the same receipts. */
  attemptId?: string;
  attemptUntil?: number;
}

export interface ReceiveResult {
  messages: StoredMessage[];
  /** Messages received too often, moved to the dead-letter queue instead of returned. */
  deadLettered: DeadLettered[];
  /**
   * Given by a standard receive that found fewer messages than `max` and dead-lettered
   * none: the earliest time after `now` at which a message of the queue becomes visible,
   * or null if none will, read in the same statement. The queue had nothing more ready,
   * so a long poll can arm its timer with it instead of asking nextVisibleAt (a round trip
   * on PostgreSQL), and let other polls wait without asking. Undefined: not read.
   */
  nextVisibleAt?: number | null;
}

export interface GroupInflight {
  total: number;
  groups: Map<string, number>;
}

/** One queue's visible, in-flight and delayed counts: its depth (`depths`), zero for a queue the store no longer has. */
export async function messageCounts(
  messages: Pick<MessageStore, 'depths'>,
  queueId: number,
  now: number,
): Promise<MessageCounts> {
  const d = (await messages.depths([queueId], now)).get(queueId);
  return { visible: d?.visible ?? 0, inflight: d?.inflight ?? 0, delayed: d?.delayed ?? 0 };
}

import type { QueueAddress } from '../engine/addressing.js';
import type { Death, MessageCounts, NewMessage, QueueRecord, StoredMessage } from '../engine/types.js';

/**
 * What the engine needs from storage: a small set of atomic operations. Every rule of
 * queue behaviour lives in the engine and reaches a store as plain parameters (times,
 * limits, where dead letters go), so a store only has to apply them atomically.
 *
 * Nothing here assumes one process: a store shared by several servers (PostgreSQL)
 * implements the same operations with row locks, and its own wake-up channel.
 */
export interface Store {
  readonly kind: string;

  // Queues
  /** Inserts the queue unless one of that name exists; returns whichever is stored. */
  createQueue(queue: Omit<QueueRecord, 'id'>): Promise<{ queue: QueueRecord; created: boolean }>;
  getQueue(accountId: string, name: string): Promise<QueueRecord | undefined>;
  getQueueById(id: number): Promise<QueueRecord | undefined>;
  /** Queues in name order, starting after `after`, at most `limit`. */
  listQueues(accountId: string, prefix: string, after: string | undefined, limit: number): Promise<QueueRecord[]>;
  updateQueue(id: number, patch: QueuePatch): Promise<QueueRecord | undefined>;
  deleteQueue(id: number): Promise<boolean>;
  /** Deletes every message if no purge happened within `cooldownMs`; false otherwise. */
  purgeQueue(id: number, now: number, cooldownMs: number): Promise<boolean>;

  // Messages
  /**
   * Stores the messages. With `limit`, the queue's length is kept within it in the same
   * transaction: the oldest ready messages are dead-lettered (drop-head), or a message
   * that does not fit is not stored and comes back with `rejected` (reject-publish, or
   * drop-head with nothing ready to drop).
   */
  send(queueId: number, messages: NewMessage[], limit?: LengthLimit): Promise<StoredMessage[]>;
  receive(queueId: number, request: ReceiveRequest): Promise<ReceiveResult>;
  deleteMessages(queueId: number, receipts: ReceiptRef[], rule: DeleteRule): Promise<ReceiptOutcome[]>;
  changeVisibility(queueId: number, changes: VisibilityChange[], now: number): Promise<ReceiptOutcome[]>;
  countMessages(queueId: number, now: number): Promise<MessageCounts>;
  /** In-flight messages only: reads the hidden range, never the visible backlog. */
  countInflight(queueId: number, now: number): Promise<number>;
  /** The earliest time after `now` at which a message of the queue becomes visible. */
  nextVisibleAt(queueId: number, now: number): Promise<number | undefined>;
  /** Every queue of every account, for background work such as retention sweeps. */
  allQueues(): Promise<QueueRecord[]>;
  /** Forgets FIFO deduplication ids and receive attempts whose interval ended before `now`. */
  sweepExpired(now: number): Promise<number>;
  /** Deletes the queue's messages sent before `cutoff` (retention); returns how many. */
  deleteSentBefore(queueId: number, cutoff: number): Promise<number>;
  /**
   * One atomic batch of expiry: up to `limit` ready messages of the queue whose
   * `expiresAt` has passed are dead-lettered to `target`, or deleted without one.
   * Returns how many.
   */
  expireMessages(queueId: number, now: number, limit: number, target: DeadLetterTarget | undefined): Promise<number>;
  /**
   * Dead-letters the message of a current receipt (still in flight, latest token) to
   * `target` in one step: 'ok', or why not ('stale', 'expired', 'gone').
   */
  rejectMessage(queueId: number, receipt: ReceiptRef, now: number, target: DeadLetterTarget): Promise<ReceiptOutcome>;
  /**
   * Takes or renews the named lease for `owner` until `now + ttlMs`, if it is free,
   * expired or already `owner`'s. Background work shared by several servers on one store
   * (retention sweeps) runs only on the holder.
   */
  tryLease(name: string, owner: string, now: number, ttlMs: number): Promise<boolean>;

  // Dead letters and redrive
  /** The queue's counters (sent, received, deleted) since it was created. */
  queueStats(queueId: number): Promise<QueueStats>;
  /** Messages by position after `afterSeq`, untouched: receive counts and visibility stay as they are. */
  peekMessages(queueId: number, afterSeq: number, limit: number): Promise<StoredMessage[]>;
  /** Inserts a RUNNING task unless the source has an active task or the account has `maxActivePerAccount`. */
  createMoveTask(task: NewMoveTask, maxActivePerAccount: number): Promise<MoveTaskRecord | 'sourceBusy' | 'accountLimit'>;
  getMoveTask(id: string): Promise<MoveTaskRecord | undefined>;
  /** The source queue's tasks, newest first. */
  listMoveTasks(sourceQueueId: number, limit: number): Promise<MoveTaskRecord[]>;
  /** Cancels a RUNNING task; returns the task as it stands afterwards. */
  cancelMoveTask(id: string): Promise<MoveTaskRecord | undefined>;
  /** Leases to `owner` every RUNNING task whose lease is free, expired or already its own. */
  leaseMoveTasks(owner: string, now: number, leaseUntil: number): Promise<MoveTaskRecord[]>;
  releaseMoveTasks(owner: string): Promise<void>;
  /** One atomic step of a task: moves up to `limit` messages and records the progress. */
  runMoveBatch(taskId: string, batch: MoveBatch): Promise<MoveBatchResult>;

  /**
   * The secret of that name, storing `fresh` first if there is none. Every process on
   * the same database gets the same value (the receipt-handle signing key).
   */
  secret(name: string, fresh: string): Promise<string>;

  /** Calls `listener` when messages may have become available in the queue. */
  onAvailable(queueId: number, listener: () => void): () => void;
  close(): Promise<void>;
}

export interface QueuePatch {
  setAttributes?: Record<string, string>;
  removeAttributes?: string[];
  setTags?: Record<string, string>;
  removeTags?: string[];
  modifiedAt?: number;
}

export interface ReceiveRequest {
  now: number;
  max: number;
  visibilityTimeoutMs: number;
  /** Messages sent before this are past retention and never returned. */
  retentionCutoff: number;
  newToken: () => string;
  deadLetter?: DeadLetterRule;
  /** FIFO: receive by message group, in order, one holder per group at a time. */
  fifo?: boolean;
  /** FIFO ReceiveRequestAttemptId: a retry until `attemptUntil` replays the same receipts. */
  attemptId?: string;
  attemptUntil?: number;
}

/** Where a dead-lettered message goes and how dead-lettering changes it. */
export interface DeadLetterTarget {
  queueId: number;
  /** The changes dead-lettering makes to the message (timestamps, ids, source, history). */
  patch(message: StoredMessage): DeadLetterPatch;
}

/** Where and how a message that has been received too often is moved on its next receive. */
export interface DeadLetterRule extends DeadLetterTarget {
  maxReceiveCount: number;
}

export interface DeadLetterPatch {
  sentAt: number;
  dedupId?: string;
  deadLetterSourceArn: string;
  /** The message's history with this death recorded; undefined leaves it as it is. */
  deaths?: Death[];
  /** Its new expiry (the target's own TTL); undefined: none, the old TTL is removed. */
  expiresAt?: number;
  /** Another destination for this message than the target's (a broken dead-letter cycle). */
  queueId?: number;
}

/** A queue length limit applied by a send (see Store.send). */
export interface LengthLimit {
  maxMessages?: number;
  /** Bytes of message bodies, as RabbitMQ's max-length-bytes counts them. */
  maxBytes?: number;
  overflow: 'drop-head' | 'reject-publish';
  /** Where drop-head sends the messages it pushes out; without one they are deleted. */
  deadLetter?: DeadLetterTarget;
}

export interface ReceiveResult {
  messages: StoredMessage[];
  deadLettered: number;
}

export interface ReceiptRef {
  seq: number;
  token: string;
}

export interface DeleteRule {
  now: number;
  /**
   * FIFO: only the current, unexpired receipt deletes. Standard: any receipt of the
   * message deletes it, as SQS does with an old receipt handle.
   */
  requireUnexpired: boolean;
}

export interface VisibilityChange extends ReceiptRef {
  visibilityTimeoutMs: number;
  /** A receipt may not keep the message invisible past receivedAt + this. */
  maxSinceReceiveMs: number;
  /** FIFO: a receipt whose visibility window has passed can no longer change it. */
  requireUnexpired: boolean;
}

/**
 * ok: applied. stale: a later receipt superseded this one (nothing done).
 * expired: the receipt's visibility window has passed. notInflight: the message is
 * visible. gone: the message no longer exists. tooLong: past the 12-hour cap.
 */
export type ReceiptOutcome = 'ok' | 'stale' | 'expired' | 'notInflight' | 'gone' | 'tooLong';

export interface QueueStats {
  /** Sent by clients or by a redrive into this queue; moves into a dead-letter queue are not sends. */
  sent: number;
  received: number;
  deleted: number;
}

export type MoveTaskStatus = 'RUNNING' | 'COMPLETED' | 'CANCELLING' | 'CANCELLED' | 'FAILED';

export interface NewMoveTask {
  id: string;
  accountId: string;
  sourceQueueId: number;
  sourceArn: string;
  destinationArn?: string;
  maxPerSecond?: number;
  /** The selective-redrive filter as JSON, kept so a resumed task applies the same one. */
  filter?: string;
  startedAt: number;
  /** How many messages the task expects to move; the source's depth when not given. */
  toMove?: number;
}

export interface MoveTaskRecord extends NewMoveTask {
  status: MoveTaskStatus;
  failureReason?: string;
  toMove: number;
  moved: number;
}

export interface MoveBatch {
  owner: string;
  now: number;
  leaseUntil: number;
  /** At most this many messages move. */
  limit: number;
  /** At most this many messages are examined (a filter may skip many). */
  scanLimit: number;
  /** Whether the message moves at all (selective redrive). */
  matches(m: StoredMessage): boolean;
  /** Where the message goes. */
  destination(m: StoredMessage): QueueAddress | undefined;
  /** The message as it arrives in `destination`: a new message id and enqueue time. */
  rewrite(m: StoredMessage, destination: QueueRecord): NewMessage;
  /** The failure reason when the source or a destination no longer exists. */
  missingQueueReason: string;
}

export interface MoveBatchResult {
  /** The task after the batch; `lost` when it is not RUNNING or leased to someone else. */
  task: MoveTaskRecord;
  lost: boolean;
  moved: number;
}

import type { MessageCounts, NewMessage, QueueRecord, StoredMessage } from '../engine/types.js';

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
  send(queueId: number, messages: NewMessage[]): Promise<StoredMessage[]>;
  receive(queueId: number, request: ReceiveRequest): Promise<ReceiveResult>;
  deleteMessages(queueId: number, receipts: ReceiptRef[], rule: DeleteRule): Promise<ReceiptOutcome[]>;
  changeVisibility(queueId: number, changes: VisibilityChange[], now: number): Promise<ReceiptOutcome[]>;
  countMessages(queueId: number, now: number): Promise<MessageCounts>;
  /** The earliest time after `now` at which a message of the queue becomes visible. */
  nextVisibleAt(queueId: number, now: number): Promise<number | undefined>;
  /** Every queue of every account, for background work such as retention sweeps. */
  allQueues(): Promise<QueueRecord[]>;
  /** Deletes the queue's messages sent before `cutoff` (retention); returns how many. */
  deleteSentBefore(queueId: number, cutoff: number): Promise<number>;

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
}

/** Where and how a message that has been received too often is moved on its next receive. */
export interface DeadLetterRule {
  queueId: number;
  maxReceiveCount: number;
  /** The changes dead-lettering makes to the message (timestamps, ids, source). */
  patch(message: StoredMessage): DeadLetterPatch;
}

export interface DeadLetterPatch {
  sentAt: number;
  dedupId?: string;
  deadLetterSourceArn: string;
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

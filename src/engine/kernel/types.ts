import type { Death } from '../../wire/deaths.js';

/** Domain types shared by the engine, the stores and the protocol adapters. */

export interface MessageAttributeValue {
  DataType: string;
  StringValue?: string;
  /** Base64, as both wire protocols carry it. */
  BinaryValue?: string;
}

export type MessageAttributes = Record<string, MessageAttributeValue>;

export interface QueueRecord {
  /** Internal id: never reused, so a re-created queue is a different queue. */
  id: number;
  accountId: string;
  /** The region it was created in: the key is (account, region, name), as in SQS. */
  region: string;
  name: string;
  fifo: boolean;
  /** Settable attributes in their canonical string form. */
  attributes: Record<string, string>;
  tags: Record<string, string>;
  createdAt: number;
  modifiedAt: number;
  lastPurgeAt: number | null;
}

/** A message as the engine hands it to a store for sending. */
export interface NewMessage {
  messageId: string;
  body: string;
  attributes?: MessageAttributes;
  systemAttributes?: MessageAttributes;
  md5OfBody: string;
  md5OfAttributes?: string;
  md5OfSystemAttributes?: string;
  senderId: string;
  sentAt: number;
  visibleAt: number;
  groupId?: string;
  dedupId?: string;
  /** FIFO deduplication: the scope (`queue`, or `group:<group id>` with DeduplicationScope messageGroup) and when the id is forgotten. */
  dedupScope?: string;
  /**
   * The other scope, whose unexpired ids also make this message a duplicate: ids sent
   * before a change of DeduplicationScope still count for their five minutes, as in SQS.
   */
  dedupOtherScope?: string;
  dedupUntil?: number;
  /** Carried over when a message is moved or redriven. */
  deadLetterSourceArn?: string;
  receiveCount?: number;
  /** When the message's time-to-live ends and it is dead-lettered (reason `expired`). */
  expiresAt?: number;
  /** Its dead-letter history, newest first (see deaths.ts); carried through redrives. */
  deaths?: Death[];
}

export interface StoredMessage extends NewMessage {
  /** Store-assigned position: strictly increasing in send order within a store. */
  seq: number;
  queueId: number;
  receiveCount: number;
  firstReceivedAt: number | null;
  /** When the current receipt was issued (for the 12-hour visibility cap). */
  receivedAt: number | null;
  receiptToken: string | null;
  /** A FIFO send deduplicated against `messageId`: nothing new was stored. */
  duplicate?: boolean;
  /** A send refused by the queue's length limit: nothing was stored. */
  rejected?: boolean;
  /** When the receive path moved it into a dead-letter queue. */
  deadLetteredAt?: number;
}

// A dead letter's history is a shape that crosses walls: src/wire owns it.
export type { Death, DeathReason } from '../../wire/deaths.js';

export interface MessageCounts {
  visible: number;
  inflight: number;
  delayed: number;
}

/** A queue's counts with what metrics and the console's overview show beside them. */
export interface QueueDepth extends MessageCounts {
  /**
   * When the oldest message was sent: its original enqueue time on a standard queue, even
   * after a dead-letter move; the move on a FIFO queue, which resets it (the seed's rule).
   */
  oldestSentAt?: number;
  /** Message groups with a message in flight (FIFO, and fair standard queues). */
  groupsInflight: number;
}

/** Identity of the caller and how to address queues back to them. */
export interface RequestContext {
  accountId: string;
  /** From the signature's credential scope, else a host `sqs.<region>.…`, else `--region`. */
  region: string;
  /** `http://host:port` as the client addressed this server. */
  baseUrl: string;
  requestId: string;
  /** The request's X-Amzn-Trace-Id header: a message sent without AWSTraceHeader gets it. */
  traceHeader?: string;
  /** The SQS action being served (set by dispatch), for queue-policy checks. */
  action?: string;
  /** The action's decoded input (set by dispatch), for the access log. */
  input?: Record<string, unknown>;
  /** The wire protocol that carried the request (`json`, `query`), set by its adapter, for metrics. */
  protocol?: string;
}

/** SQS's RedrivePolicy queue attribute, parsed (redrive-policy.ts). */
export interface RedrivePolicy {
  deadLetterTargetArn: string;
  maxReceiveCount: number;
}

/** SQS's RedriveAllowPolicy queue attribute, parsed (redrive-policy.ts). */
export interface RedriveAllowPolicy {
  redrivePermission: 'allowAll' | 'denyAll' | 'byQueue';
  sourceQueueArns?: string[];
}

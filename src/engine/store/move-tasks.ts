import type { QueueAddress } from '../kernel/addressing.js';
import type { NewMessage, QueueRecord, StoredMessage } from '../kernel/types.js';

/** Redrive move tasks: each step is one atomic batch, leased so one node runs a task. */
export interface MoveTaskStore {
  /** Inserts a RUNNING task unless the source has an active task or the account has `maxActivePerAccount`. */
  create(task: NewMoveTask, maxActivePerAccount: number): Promise<MoveTaskRecord | 'sourceBusy' | 'accountLimit'>;
  get(id: string): Promise<MoveTaskRecord | undefined>;
  /** The source queue's tasks, newest first. */
  list(sourceQueueId: number, limit: number): Promise<MoveTaskRecord[]>;
  /** Cancels a RUNNING task; returns the task as it stands afterwards. */
  cancel(id: string): Promise<MoveTaskRecord | undefined>;
  /** Leases to `owner` every RUNNING task whose lease is free, lapsed or already its own. */
  lease(owner: string, now: number, leaseUntil: number): Promise<MoveTaskRecord[]>;
  release(owner: string): Promise<void>;
  /** One atomic step of a task: moves up to `limit` messages and records the progress. */
  runBatch(taskId: string, batch: MoveBatch): Promise<MoveBatchResult>;
  /**
   * MoveMessagesById: moves the queue's messages with these ids, each one atomically (it
   * is in exactly one queue at any time), with a move task's rules and counters.
   */
  moveByIds(queueId: number, messageIds: readonly string[], move: MoveById): Promise<MoveByIdResult[]>;
  /** The queue's message with this id if it is in flight (reads the hidden range only). */
  inflightById(queueId: number, messageId: string, now: number): Promise<StoredMessage | undefined>;
}

/** The rules of a move by id: as a move task's batch, without the task. */
export type MoveById = Pick<MoveBatch, 'now' | 'matches' | 'destination' | 'rewrite'>;

/**
 * One message of a move by id. notFound: the queue has no message with this id.
 * refused: `matches` said no (`message` tells the engine why). noDestination: its
 * destination queue does not exist. moved: it is now `moved` in `destination`.
 */
export interface MoveByIdResult {
  id: string;
  outcome: 'moved' | 'notFound' | 'refused' | 'noDestination';
  message?: StoredMessage;
  destination?: QueueRecord;
  newMessageId?: string;
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
  /** When set, the batch stops examining messages once their bodies add up to this many characters. */
  scanBytes?: number;
  /** Whether the message moves at all (selective redrive). */
  matches(m: StoredMessage): boolean;
  /** Where the message goes. */
  destination(m: StoredMessage): QueueAddress | undefined;
  /** The message as it arrives in `destination`: a new message id and enqueue time. */
  rewrite(m: StoredMessage, destination: QueueRecord): NewMessage;
  /** The failure reason when the source or a destination no longer exists. */
  missingQueueReason: string;
  /**
   * The failure reason when `destination` would refuse the message as a send (too large
   * for its MaximumMessageSize), else undefined: the task fails there, as SQS's redrive,
   * a send to the destination, does; the message stays in the source.
   */
  refusal?(m: StoredMessage, destination: QueueRecord): string | undefined;
}

export interface MoveBatchResult {
  /** The task after the batch; `lost` when it is not RUNNING or leased to someone else. */
  task: MoveTaskRecord;
  lost: boolean;
  moved: number;
  /** When the batch failed the task at a message whose destination was refused: its id and where it would have gone. */
  failedAt?: { messageId: string; deadLetterSourceArn?: string };
  /** How many of the moved messages went to each destination (a redrive's sends: the engine counts them). */
  sentTo?: readonly Destination[];
}

export interface Destination {
  queue: QueueRecord;
  count: number;
}

import type { MoveTaskRecord, MoveTaskStatus } from '../engine/store/move-tasks.js';
import type { NewMessage, QueueRecord, StoredMessage } from '../engine/kernel/types.js';

/** Maps rows of both SQL stores (SQLite and PostgreSQL) to domain records. */
export interface QueueRow {
  id: number;
  account_id: string;
  region: string;
  name: string;
  fifo: number | boolean;
  attributes: string | Record<string, string>;
  tags: string | Record<string, string>;
  created_at: number | string;
  modified_at: number | string;
  last_purge_at: number | string | null;
}

const json = <T>(v: string | T): T => (typeof v === 'string' ? (JSON.parse(v) as T) : v);
const num = (v: number | string | null): number | null => (v === null ? null : Number(v));

export function toQueue(r: QueueRow): QueueRecord {
  return {
    id: Number(r.id),
    accountId: r.account_id,
    region: r.region,
    name: r.name,
    fifo: Boolean(r.fifo),
    attributes: json(r.attributes),
    tags: json(r.tags),
    createdAt: Number(r.created_at),
    modifiedAt: Number(r.modified_at),
    lastPurgeAt: num(r.last_purge_at),
  };
}

export interface MessageRow {
  seq: number | string;
  queue_id: number | string;
  message_id: string;
  body: string;
  attributes: string | null;
  system_attributes: string | null;
  md5_body: string;
  md5_attributes: string | null;
  md5_system: string | null;
  sender_id: string;
  sent_at: number | string;
  visible_at: number | string;
  receive_count: number;
  first_received_at: number | string | null;
  received_at: number | string | null;
  receipt_token: string | null;
  group_id: string | null;
  dedup_id: string | null;
  dead_letter_source: string | null;
  dead_lettered_at?: number | string | null;
  deaths?: string | null;
  expires_at?: number | string | null;
}

/**
 * Every column of a message, in the order `fromColumns` reads them. The SQLite store's
 * reads fetch rows as arrays in this order (`raw`, sqlite/message-rows.ts): better-sqlite3
 * builds a row object several times slower than an array, which was a third of a receive's cost.
 */
const READ_COLUMN_NAMES = [
  'seq',
  'queue_id',
  'message_id',
  'body',
  'attributes',
  'system_attributes',
  'md5_body',
  'md5_attributes',
  'md5_system',
  'sender_id',
  'sent_at',
  'visible_at',
  'receive_count',
  'first_received_at',
  'received_at',
  'receipt_token',
  'group_id',
  'dedup_id',
  'dead_letter_source',
  'dead_lettered_at',
  'deaths',
  'expires_at',
] as const satisfies readonly (keyof MessageRow)[];

export type Cell = string | number | null | undefined;

/** A row object of either SQL store as a message. */
export function toMessage(r: MessageRow): StoredMessage {
  return fromColumns(READ_COLUMN_NAMES.map((c) => r[c]));
}

/**
 * The values of READ_COLUMNS as a message: the one mapping of both stores' rows.
 * Postgres returns BIGINT columns as strings, hence the conversions.
 */
export function fromColumns(r: Cell[]): StoredMessage {
  const [
    seq,
    queueId,
    messageId,
    body,
    attributes,
    systemAttributes,
    md5Body,
    md5Attributes,
    md5System,
    senderId,
    sentAt,
    visibleAt,
    receiveCount,
    firstReceivedAt,
    receivedAt,
    receiptToken,
    groupId,
    dedupId,
    source,
    deadLetteredAt,
    deaths,
    expiresAt,
  ] = r;
  return {
    seq: Number(seq),
    queueId: Number(queueId),
    messageId: messageId as string,
    body: body as string,
    attributes: attributes ? JSON.parse(attributes as string) : undefined,
    systemAttributes: systemAttributes ? JSON.parse(systemAttributes as string) : undefined,
    md5OfBody: md5Body as string,
    md5OfAttributes: (md5Attributes as string | null) ?? undefined,
    md5OfSystemAttributes: (md5System as string | null) ?? undefined,
    senderId: senderId as string,
    sentAt: Number(sentAt),
    visibleAt: Number(visibleAt),
    receiveCount: receiveCount as number,
    firstReceivedAt: num(firstReceivedAt ?? null),
    receivedAt: num(receivedAt ?? null),
    receiptToken: (receiptToken as string | null) ?? null,
    groupId: (groupId as string | null) ?? undefined,
    dedupId: (dedupId as string | null) ?? undefined,
    deadLetterSourceArn: (source as string | null) ?? undefined,
    deadLetteredAt: deadLetteredAt == null ? undefined : Number(deadLetteredAt),
    expiresAt: expiresAt == null ? undefined : Number(expiresAt),
    deaths: deaths ? JSON.parse(deaths as string) : undefined,
  };
}

/** A message as it stands right after its insert at `seq`: never received. */
export function storedAt(queueId: number, m: NewMessage, seq: number): StoredMessage {
  return {
    ...m,
    queueId,
    receiveCount: m.receiveCount ?? 0,
    firstReceivedAt: null,
    receivedAt: null,
    receiptToken: null,
    seq,
  };
}

/** Column values for inserting a message, in MESSAGE_COLUMNS order. */
export const MESSAGE_COLUMNS = [
  'queue_id',
  'message_id',
  'body',
  'attributes',
  'system_attributes',
  'md5_body',
  'md5_attributes',
  'md5_system',
  'sender_id',
  'sent_at',
  'visible_at',
  'receive_count',
  'group_id',
  'dedup_id',
  'dead_letter_source',
  'deaths',
  'expires_at',
] as const;

export function messageValues(
  queueId: number,
  m: Omit<StoredMessage, 'seq' | 'queueId' | 'firstReceivedAt' | 'receivedAt' | 'receiptToken' | 'receiveCount'> & {
    receiveCount?: number;
  },
): unknown[] {
  return [
    queueId,
    m.messageId,
    m.body,
    m.attributes ? JSON.stringify(m.attributes) : null,
    m.systemAttributes ? JSON.stringify(m.systemAttributes) : null,
    m.md5OfBody,
    m.md5OfAttributes ?? null,
    m.md5OfSystemAttributes ?? null,
    m.senderId,
    m.sentAt,
    m.visibleAt,
    m.receiveCount ?? 0,
    m.groupId ?? null,
    m.dedupId ?? null,
    m.deadLetterSourceArn ?? null,
    m.deaths?.length ? JSON.stringify(m.deaths) : null,
    m.expiresAt ?? null,
  ];
}

export interface MoveTaskRow {
  id: string;
  account_id: string;
  source_queue_id: number | string;
  source_arn: string;
  destination_arn: string | null;
  max_per_second: number | null;
  filter: string | null;
  status: MoveTaskStatus;
  failure_reason: string | null;
  to_move: number | string;
  moved: number | string;
  started_at: number | string;
  cursor: number | string;
  max_seq: number | string;
  lease_owner: string | null;
  lease_until: number | string;
}

export function toTask(r: MoveTaskRow): MoveTaskRecord {
  return {
    id: r.id,
    accountId: r.account_id,
    sourceQueueId: Number(r.source_queue_id),
    sourceArn: r.source_arn,
    destinationArn: r.destination_arn ?? undefined,
    maxPerSecond: r.max_per_second ?? undefined,
    filter: r.filter ?? undefined,
    status: r.status,
    failureReason: r.failure_reason ?? undefined,
    toMove: Number(r.to_move),
    moved: Number(r.moved),
    startedAt: Number(r.started_at),
  };
}

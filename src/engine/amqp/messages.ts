import { randomUUID } from 'node:crypto';
import type { EngineContext } from '../context.js';
import { sendExpiry } from '../dead-letters/dead-lettering.js';
import { md5Hex } from '../messages/md5.js';
import type { Death, MessageAttributes, NewMessage, QueueRecord, StoredMessage } from '../types.js';
import { hasForbiddenCharacters } from '../queues/validation.js';
import { AMQP_ATTRIBUTE } from './attribute-name.js';

/**
 * An AMQP message as a Redrive message. The body is stored as text when it is UTF-8 with
 * SQS's allowed characters (so SQS receivers read it unchanged), else base64. What only
 * AMQP needs (properties, the exchange and routing key it was published with, the body's
 * encoding) travels in one message system attribute, which SQS receivers never see.
 */
export { AMQP_ATTRIBUTE };

export interface AmqpContent {
  body: Buffer;
  /** Content header property flags and list, as the publisher sent them. */
  properties: Buffer;
  exchange: string;
  routingKey: string;
  /** Delivered: the message's dead-letter history, which becomes its x-death headers. */
  deaths?: Death[];
  /** Delivered: a dead-letter routing key replaced its keys, so its CC header goes. */
  dropCc?: boolean;
}

/** What a publish adds to its content for routing and dead-lettering. */
export interface PublishExtras {
  /** Headers as plain values (the headers exchange). */
  headers?: Record<string, unknown>;
  /** Sender-selected distribution: the CC and BCC headers' keys (BCC already removed from the properties). */
  cc?: string[];
  bcc?: string[];
  /** The `expiration` property as given (x-death's original-expiration). */
  expiration?: string;
}

export interface Envelope {
  /** exchange, routing key */
  x: string;
  k: string;
  /** properties, base64 (absent when there are none) */
  p?: string;
  /** the body is stored base64 */
  b?: 1;
  /** more routing keys (CC, then BCC), the CC keys, the expiration property, the headers as plain values */
  r?: string[];
  c?: string[];
  e?: string;
  h?: Record<string, unknown>;
  /** the CC header is dropped on delivery (a dead-letter routing key replaced the keys) */
  d?: 1;
  /** dead-lettered through an exchange: its receive count when it arrived (the count carries over, as SQS's does) */
  n?: number;
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
/** Two zero octets: no property flags set. */
const NO_PROPERTIES = Buffer.alloc(2);

function bodyText(body: Buffer): string | undefined {
  try {
    const s = utf8.decode(body);
    return hasForbiddenCharacters(s) ? undefined : s;
  } catch {
    return undefined;
  }
}

/** The message to store for a publish to `queue`; `expirationMs` is the message's own TTL (property `expiration`). */
export function toNewMessage(
  engine: EngineContext, queue: QueueRecord, senderId: string, c: AmqpContent, expirationMs: number | undefined, extras: PublishExtras = {},
): NewMessage {
  const text = bodyText(c.body);
  const env: Envelope = { x: c.exchange, k: c.routingKey };
  const more = [...extras.cc ?? [], ...extras.bcc ?? []];
  if (more.length) env.r = more;
  if (extras.cc?.length) env.c = extras.cc;
  if (extras.expiration !== undefined) env.e = extras.expiration;
  if (extras.headers && Object.keys(extras.headers).length) env.h = extras.headers;
  if (c.properties.length > 2 || !c.properties.equals(NO_PROPERTIES)) env.p = c.properties.toString('base64');
  if (text === undefined) env.b = 1;
  const body = text ?? c.body.toString('base64');
  const now = engine.clock.now();
  const queueExpiry = sendExpiry(engine, queue, undefined, now);
  const own = expirationMs === undefined ? undefined : now + expirationMs;
  return {
    messageId: randomUUID(),
    body,
    systemAttributes: envelopeAttributes(undefined, env),
    md5OfBody: md5Hex(body),
    senderId,
    sentAt: now,
    visibleAt: now,
    expiresAt: queueExpiry === undefined ? own : own === undefined ? queueExpiry : Math.min(queueExpiry, own),
  };
}

/** The message's envelope; a message sent over SQS was, as it were, published to the default exchange. */
export function envelopeOf(m: Pick<StoredMessage, 'systemAttributes'>, queueName: string): Envelope {
  const raw = m.systemAttributes?.[AMQP_ATTRIBUTE]?.StringValue;
  return raw === undefined ? { x: '', k: queueName } : (JSON.parse(raw) as Envelope);
}

/** The message's system attributes with `env` as its envelope. */
export function envelopeAttributes(system: MessageAttributes | undefined, env: Envelope): MessageAttributes {
  return { ...system, [AMQP_ATTRIBUTE]: { DataType: 'String', StringValue: JSON.stringify(env) } };
}

/** A stored message as AMQP delivers it; one sent over SQS has no properties and the default exchange. */
export function fromStored(m: StoredMessage, queueName: string, env = envelopeOf(m, queueName)): AmqpContent {
  const content: AmqpContent = {
    body: env.b ? Buffer.from(m.body, 'base64') : Buffer.from(m.body, 'utf8'),
    properties: env.p ? Buffer.from(env.p, 'base64') : NO_PROPERTIES,
    exchange: env.x,
    routingKey: env.k,
  };
  if (m.deaths?.length) content.deaths = m.deaths;
  if (env.d) content.dropCc = true;
  return content;
}

/**
 * How often the message has been delivered from the queue it is in: a dead letter keeps
 * its receive count (as SQS's do), but RabbitMQ's redelivered flag and delivery limit
 * count deliveries from this queue only.
 */
export function deliveriesHere(m: Pick<StoredMessage, 'receiveCount' | 'deadLetteredAt'>, env: Envelope): number {
  return m.deadLetteredAt !== undefined && env.n ? Math.max(0, m.receiveCount - env.n) : m.receiveCount;
}

import { randomUUID } from 'node:crypto';
import type { EngineContext } from '../context/engine-context.js';
import { sendExpiry } from '../messages/limits.js';
import { md5Hex } from '../messages/md5.js';
import type { Death, NewMessage, QueueRecord, StoredMessage } from '../kernel/types.js';
import { hasForbiddenCharacters } from '../queues/validation.js';
import { envelopeAttributes, envelopeOf, type Amqp10Sections, type Envelope } from '../routing/envelope.js';

/**
 * An AMQP message as a Redrive message. The body is stored as text when it is UTF-8 with
 * SQS's allowed characters (so SQS receivers read it unchanged), else base64. What only
 * AMQP needs travels in its envelope (envelope.ts).
 */

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
  /** Published over AMQP 1.0: its own sections (envelope.ts). */
  amqp10?: Amqp10Sections;
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
  engine: EngineContext,
  queue: QueueRecord,
  senderId: string,
  c: AmqpContent,
  expirationMs: number | undefined,
  extras: PublishExtras = {},
): NewMessage {
  const text = bodyText(c.body);
  const env: Envelope = {
    exchange: c.exchange,
    routingKey: c.routingKey,
    moreRoutingKeys: [...(extras.cc ?? []), ...(extras.bcc ?? [])],
    ccKeys: extras.cc,
    expiration: extras.expiration,
    headers: extras.headers,
    base64Body: text === undefined,
    amqp10: c.amqp10,
  };
  if (c.properties.length > 2 || !c.properties.equals(NO_PROPERTIES)) env.properties = c.properties.toString('base64');
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

/** A stored message as AMQP delivers it; one sent over SQS has no properties and the default exchange. */
export function fromStored(m: StoredMessage, queueName: string, env = envelopeOf(m, queueName)): AmqpContent {
  const content: AmqpContent = {
    body: env.base64Body ? Buffer.from(m.body, 'base64') : Buffer.from(m.body, 'utf8'),
    properties: env.properties ? Buffer.from(env.properties, 'base64') : NO_PROPERTIES,
    exchange: env.exchange,
    routingKey: env.routingKey,
  };
  if (m.deaths?.length) content.deaths = m.deaths;
  if (env.dropCc) content.dropCc = true;
  if (env.amqp10) content.amqp10 = env.amqp10;
  return content;
}

/**
 * How often the message has been delivered from the queue it is in: a dead letter keeps
 * its receive count (as SQS's do), but RabbitMQ's redelivered flag and delivery limit
 * count deliveries from this queue only.
 */
export function deliveriesHere(m: Pick<StoredMessage, 'receiveCount' | 'deadLetteredAt'>, env: Envelope): number {
  return m.deadLetteredAt !== undefined && env.receiveCountOnArrival
    ? Math.max(0, m.receiveCount - env.receiveCountOnArrival)
    : m.receiveCount;
}

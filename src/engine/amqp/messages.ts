import { randomUUID } from 'node:crypto';
import type { EngineContext } from '../context.js';
import { sendExpiry } from '../dead-lettering.js';
import { md5Hex } from '../md5.js';
import type { NewMessage, QueueRecord, StoredMessage } from '../types.js';
import { hasForbiddenCharacters } from '../validation.js';

/**
 * An AMQP message as a Redrive message. The body is stored as text when it is UTF-8 with
 * SQS's allowed characters (so SQS receivers read it unchanged), else base64. What only
 * AMQP needs (properties, the exchange and routing key it was published with, the body's
 * encoding) travels in one message system attribute, which SQS receivers never see.
 */
export const AMQP_ATTRIBUTE = 'RedriveAmqp';

export interface AmqpContent {
  body: Buffer;
  /** Content header property flags and list, as the publisher sent them. */
  properties: Buffer;
  exchange: string;
  routingKey: string;
}

interface Envelope {
  /** exchange, routing key */
  x: string;
  k: string;
  /** properties, base64 (absent when there are none) */
  p?: string;
  /** the body is stored base64 */
  b?: 1;
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
  engine: EngineContext, queue: QueueRecord, senderId: string, c: AmqpContent, expirationMs: number | undefined,
): NewMessage {
  const text = bodyText(c.body);
  const env: Envelope = { x: c.exchange, k: c.routingKey };
  if (c.properties.length > 2 || !c.properties.equals(NO_PROPERTIES)) env.p = c.properties.toString('base64');
  if (text === undefined) env.b = 1;
  const body = text ?? c.body.toString('base64');
  const now = engine.clock.now();
  const queueExpiry = sendExpiry(engine, queue, undefined, now);
  const own = expirationMs === undefined ? undefined : now + expirationMs;
  return {
    messageId: randomUUID(),
    body,
    systemAttributes: { [AMQP_ATTRIBUTE]: { DataType: 'String', StringValue: JSON.stringify(env) } },
    md5OfBody: md5Hex(body),
    senderId,
    sentAt: now,
    visibleAt: now,
    expiresAt: queueExpiry === undefined ? own : own === undefined ? queueExpiry : Math.min(queueExpiry, own),
  };
}

/** A stored message as AMQP delivers it; one sent over SQS has no properties and the default exchange. */
export function fromStored(m: StoredMessage, queueName: string): AmqpContent {
  const raw = m.systemAttributes?.[AMQP_ATTRIBUTE]?.StringValue;
  if (raw === undefined) return { body: Buffer.from(m.body, 'utf8'), properties: NO_PROPERTIES, exchange: '', routingKey: queueName };
  const env = JSON.parse(raw) as Envelope;
  return {
    body: env.b ? Buffer.from(m.body, 'base64') : Buffer.from(m.body, 'utf8'),
    properties: env.p ? Buffer.from(env.p, 'base64') : NO_PROPERTIES,
    exchange: env.x,
    routingKey: env.k,
  };
}

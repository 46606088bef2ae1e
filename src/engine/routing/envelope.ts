import type { MessageAttributes, StoredMessage } from '../kernel/types.js';
import { AMQP_ATTRIBUTE } from '../kernel/attribute-names.js';

/**
 * What only AMQP needs of a stored message (properties, the exchange and routing keys it
 * was published with, the body's encoding), kept in one message system attribute that
 * SQS receivers never see. Logic reads the named fields; the stored JSON has one-letter
 * keys to stay small, and only this file knows them.
 */
export interface Envelope {
  exchange: string;
  routingKey: string;
  /** Content header property flags and list, base64 (absent when there are none). */
  properties?: string;
  /** The body is stored base64 (it is not UTF-8 text SQS allows). */
  base64Body?: boolean;
  /** Routing keys after the first: the CC keys, then the BCC keys. */
  moreRoutingKeys?: string[];
  /** The CC header's keys (x-death's routing-keys). */
  ccKeys?: string[];
  /** The `expiration` property as given (x-death's original-expiration). */
  expiration?: string;
  /** Headers as plain values (the headers exchange). */
  headers?: Record<string, unknown>;
  /** The CC header is dropped on delivery: a dead-letter routing key replaced the keys. */
  dropCc?: boolean;
  /** Dead-lettered through an exchange: its receive count when it arrived (the count carries over, as SQS's does). */
  receiveCountOnArrival?: number;
  /** Dead-letter copies this message and its copies may still make (dead-letter-exchange.ts); absent: all of them. */
  copyBudget?: number;
  /** Published over AMQP 1.0: its own sections, given back unchanged to AMQP 1.0 receivers. */
  amqp10?: Amqp10Sections;
}

/**
 * An AMQP 1.0 message's header, message annotations, properties and application
 * properties (encoded, base64), and how its body is stored: the bytes of its one data
 * section, the text of its amqp-value string, or its body sections encoded.
 */
export interface Amqp10Sections {
  sections: string;
  body: 'data' | 'text' | 'encoded';
}

/** The stored form. */
interface StoredEnvelope {
  x: string;
  k: string;
  r?: string[];
  c?: string[];
  e?: string;
  h?: Record<string, unknown>;
  p?: string;
  b?: 1;
  n?: number;
  d?: 1;
  q?: number;
  a?: string;
  y?: 't' | 'e';
}

function encode(env: Envelope): string {
  const s: StoredEnvelope = { x: env.exchange, k: env.routingKey };
  if (env.moreRoutingKeys?.length) s.r = env.moreRoutingKeys;
  if (env.ccKeys?.length) s.c = env.ccKeys;
  if (env.expiration !== undefined) s.e = env.expiration;
  if (env.headers && Object.keys(env.headers).length) s.h = env.headers;
  if (env.properties !== undefined) s.p = env.properties;
  if (env.base64Body) s.b = 1;
  if (env.receiveCountOnArrival) s.n = env.receiveCountOnArrival;
  if (env.dropCc) s.d = 1;
  if (env.copyBudget !== undefined) s.q = env.copyBudget;
  if (env.amqp10) {
    s.a = env.amqp10.sections;
    if (env.amqp10.body !== 'data') s.y = env.amqp10.body === 'text' ? 't' : 'e';
  }
  return JSON.stringify(s);
}

function decode(raw: string): Envelope {
  const s = JSON.parse(raw) as StoredEnvelope;
  const env: Envelope = { exchange: s.x, routingKey: s.k };
  if (s.r !== undefined) env.moreRoutingKeys = s.r;
  if (s.c !== undefined) env.ccKeys = s.c;
  if (s.e !== undefined) env.expiration = s.e;
  if (s.h !== undefined) env.headers = s.h;
  if (s.p !== undefined) env.properties = s.p;
  if (s.b) env.base64Body = true;
  if (s.n !== undefined) env.receiveCountOnArrival = s.n;
  if (s.d) env.dropCc = true;
  if (s.q !== undefined) env.copyBudget = s.q;
  if (s.a !== undefined) env.amqp10 = { sections: s.a, body: s.y === 't' ? 'text' : s.y === 'e' ? 'encoded' : 'data' };
  return env;
}

/** Whether the message was published over AMQP (or imported as such). */
export function hasEnvelope(m: Pick<StoredMessage, 'systemAttributes'>): boolean {
  return m.systemAttributes?.[AMQP_ATTRIBUTE] !== undefined;
}

/** The message's envelope; a message sent over SQS was, as it were, published to the default exchange. */
export function envelopeOf(m: Pick<StoredMessage, 'systemAttributes'>, queueName: string): Envelope {
  const raw = m.systemAttributes?.[AMQP_ATTRIBUTE]?.StringValue;
  return raw === undefined ? { exchange: '', routingKey: queueName } : decode(raw);
}

/** The message's system attributes with `env` as its envelope. */
export function envelopeAttributes(system: MessageAttributes | undefined, env: Envelope): MessageAttributes {
  return { ...system, [AMQP_ATTRIBUTE]: { DataType: 'String', StringValue: encode(env) } };
}

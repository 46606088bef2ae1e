import type { Delivery } from '../../engine/amqp/broker.js';
import type { AmqpContent } from '../../engine/amqp/messages.js';
import type { Publish } from '../../engine/amqp/publish.js';
import { firstDeathEntry } from '../../engine/dead-letters/deaths.js';
import type { Death } from '../../engine/kernel/types.js';
import { plainTable, type FieldTable, type FieldValue } from '../amqp/codec.js';
import { senderSelected } from '../amqp/death-headers.js';
import { propertiesFromRaw, rawProperties, type Properties } from '../amqp/properties.js';
import { Decoder, DecodeError } from './codec.js';
import {
  dataSection,
  decodeMessage,
  encodeBody,
  encodeSections,
  HEADER,
  PROPS,
  SECTION,
  valueSection,
  withField,
  type Message,
} from './message.js';
import { NULL, numberOf, textEntries, textOf, v, type MapValue, type Value } from './types.js';

/**
 * AMQP 1.0 messages to and from what the broker stores (docs/amqp.md, "Message
 * conversion"). A message keeps its own format, as RabbitMQ 4 keeps it: one published
 * over 1.0 is stored with its 1.0 sections and given back to 1.0 receivers unchanged,
 * and with 0-9-1 properties made from them for 0-9-1 consumers (and the headers
 * exchange). A message published over 0-9-1 or sent over SQS is converted on delivery.
 */

/** The 0-9-1 content type of a body that is AMQP 1.0 encoded sections, as RabbitMQ 4 names it. */
const AMQP_ENCODED = 'message/vnd.rabbitmq.amqp';

/** Annotations the broker sets on delivery; a publisher's own are dropped. */
const BROKER_ANNOTATIONS = new Set(['x-exchange', 'x-routing-key', 'x-opt-deaths']);

/** A received message as a publish to `exchange` with `routingKey`. */
export function toPublish(m: Message, exchange: string, routingKey: string): Publish {
  const { body, kind } = storedBody(m.body);
  const header = m.header;
  const ttl = numberOf(header?.[HEADER.ttl]);
  const props = amqp091Properties(m, kind);
  const raw = rawProperties(props);
  const { cc, bcc, properties } = senderSelected(raw, props.headers);
  const content: AmqpContent = {
    body,
    properties,
    exchange,
    routingKey,
    amqp10: { sections: encodeSections(m).toString('base64'), body: kind },
  };
  return {
    content,
    expirationMs: ttl,
    expiration: ttl === undefined ? undefined : String(ttl),
    headers: props.headers && plainTable(props.headers),
    cc,
    bcc,
  };
}

/** The body to store: one data section's bytes, an amqp-value string's text, or the sections encoded. */
function storedBody(sections: Value[]): { body: Buffer; kind: 'data' | 'text' | 'encoded' } {
  const [only] = sections;
  if (sections.length === 1 && only?.type === 'described') {
    const code = only.descriptor.type === 'ulong' ? Number(only.descriptor.value) : -1;
    if (code === SECTION.data && only.value.type === 'binary') return { body: only.value.value, kind: 'data' };
    if (code === SECTION.amqpValue && only.value.type === 'string')
      return { body: Buffer.from(only.value.value, 'utf8'), kind: 'text' };
  }
  return { body: encodeBody(sections), kind: 'encoded' };
}

/** The 0-9-1 properties of a 1.0 message, as RabbitMQ 4 converts them. */
function amqp091Properties(m: Message, kind: 'data' | 'text' | 'encoded'): Properties {
  const p: Properties = {};
  const h = m.header;
  const durable = h?.[HEADER.durable];
  p.deliveryMode = durable?.type === 'bool' && durable.value ? 2 : 1;
  const priority = numberOf(h?.[HEADER.priority]);
  if (priority !== undefined) p.priority = priority & 0xff;
  const ttl = numberOf(h?.[HEADER.ttl]);
  if (ttl !== undefined) p.expiration = String(ttl);
  const pr = m.properties;
  const id = idText(pr?.[PROPS.messageId]);
  if (id !== undefined) p.messageId = short(id);
  const user = pr?.[PROPS.userId];
  if (user?.type === 'binary') p.userId = short(user.value.toString('utf8'));
  const replyTo = textOf(pr?.[PROPS.replyTo]);
  if (replyTo !== undefined) p.replyTo = short(replyTo);
  const correlation = idText(pr?.[PROPS.correlationId]);
  if (correlation !== undefined) p.correlationId = short(correlation);
  const contentType = textOf(pr?.[PROPS.contentType]);
  if (kind === 'encoded') p.contentType = AMQP_ENCODED;
  else if (contentType !== undefined) p.contentType = short(contentType);
  const encoding = textOf(pr?.[PROPS.contentEncoding]);
  if (encoding !== undefined) p.contentEncoding = short(encoding);
  const created = numberOf(pr?.[PROPS.creationTime]);
  if (created !== undefined) p.timestamp = BigInt(Math.floor(created / 1000));
  const subject = textOf(pr?.[PROPS.subject]);
  if (subject !== undefined) p.type = short(subject);
  const headers: FieldTable = new Map();
  for (const [k, x] of textEntries(m.applicationProperties)) {
    const f = fieldOf(x);
    if (f && Buffer.byteLength(k) < 256) headers.set(k, f);
  }
  for (const [k, x] of textEntries(m.messageAnnotations)) {
    const f = k.startsWith('x-') && !BROKER_ANNOTATIONS.has(k) ? fieldOf(x) : undefined;
    if (f && Buffer.byteLength(k) < 256) headers.set(k, f);
  }
  if (headers.size) p.headers = headers;
  return p;
}

/** A 0-9-1 shortstr holds 255 bytes: longer values are cut (RabbitMQ moves them to headers). */
function short(s: string): string {
  const b = Buffer.from(s, 'utf8');
  return b.length <= 255 ? s : b.subarray(0, 255).toString('utf8');
}

function idText(x: Value | undefined): string | undefined {
  if (!x) return undefined;
  if (x.type === 'uuid') return uuidText(x.value);
  if (x.type === 'binary') return x.value.toString('utf8');
  if (x.type === 'ulong') return String(x.value);
  return textOf(x);
}

const uuidText = (b: Buffer) => {
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};

/** An application property as a 0-9-1 field; lists, maps and arrays are left out, as RabbitMQ leaves them. */
function fieldOf(x: Value): FieldValue | undefined {
  switch (x.type) {
    case 'string':
    case 'symbol':
      return { type: 'S', value: Buffer.from(x.value, 'utf8') };
    case 'bool':
      return { type: 't', value: x.value };
    case 'ubyte':
      return { type: 'B', value: x.value };
    case 'byte':
      return { type: 'b', value: x.value };
    case 'ushort':
      return { type: 'u', value: x.value };
    case 'short':
      return { type: 's', value: x.value };
    case 'uint':
      return { type: 'i', value: x.value };
    case 'int':
      return { type: 'I', value: x.value };
    case 'long':
      return { type: 'l', value: x.value };
    case 'ulong':
      return x.value < 1n << 63n ? { type: 'l', value: x.value } : undefined;
    case 'float':
      return { type: 'f', value: x.value };
    case 'double':
      return { type: 'd', value: x.value };
    case 'timestamp':
      return { type: 'T', value: x.value / 1000n };
    case 'binary':
      return { type: 'x', value: x.value };
    default:
      return undefined;
  }
}

/** A 0-9-1 field as a 1.0 value; tables are left out (1.0 application properties are simple). */
function amqpValueOf(f: FieldValue): Value | undefined {
  switch (f.type) {
    case 'S':
      return v.string(f.value.toString('utf8'));
    case 'x':
      return v.binary(f.value);
    case 't':
      return v.bool(f.value);
    case 'b':
      return { type: 'byte', value: f.value };
    case 'B':
      return { type: 'ubyte', value: f.value };
    case 's':
      return { type: 'short', value: f.value };
    case 'u':
      return { type: 'ushort', value: f.value };
    case 'I':
      return { type: 'int', value: f.value };
    case 'i':
      return { type: 'uint', value: f.value };
    case 'l':
      return { type: 'long', value: f.value };
    case 'f':
      return { type: 'float', value: f.value };
    case 'd':
      return { type: 'double', value: f.value };
    case 'T':
      return v.timestamp(Number(f.value) * 1000);
    case 'V':
      return { type: 'null' };
    default:
      return undefined;
  }
}

/** The message a 1.0 receiver gets for a delivery, with the broker's annotations and header. */
export function toMessage(d: Delivery): Message {
  const c = d.content;
  const m = c.amqp10 ? ownMessage(c) : convertedMessage(c);
  const annotations = new Map<Value, Value>();
  for (const [k, x] of m.messageAnnotations?.value ?? []) {
    if (!BROKER_ANNOTATIONS.has(textOf(k) ?? '')) annotations.set(k, x);
  }
  annotations.set(v.symbol('x-exchange'), v.string(c.exchange));
  annotations.set(v.symbol('x-routing-key'), v.string(c.routingKey));
  let header = m.header;
  if (c.deaths?.length) {
    for (const [k, x] of deathAnnotations(c.deaths)) annotations.set(v.symbol(k), x);
    // The TTL is removed on dead-lettering, so the message does not expire again.
    header = withField(header, HEADER.ttl, undefined);
  }
  header = withField(header, HEADER.firstAcquirer, v.bool(d.receiveCount <= 1));
  header = withField(header, HEADER.deliveryCount, v.uint(Math.max(0, d.receiveCount - 1)));
  return { ...m, header, messageAnnotations: { type: 'map', value: annotations } };
}

/** A message published over 1.0: its own sections and body. */
function ownMessage(c: AmqpContent): Message {
  const stored = decodeMessage(Buffer.from(c.amqp10!.sections, 'base64'));
  const kind = c.amqp10!.body;
  let body: Value[];
  if (kind === 'data') body = [dataSection(c.body)];
  else if (kind === 'text') body = [valueSection(v.string(c.body.toString('utf8')))];
  else body = bodySections(c.body);
  return { ...stored, body };
}

function bodySections(encoded: Buffer): Value[] {
  const d = new Decoder(encoded);
  const out: Value[] = [];
  while (!d.done) out.push(d.value());
  if (!out.length) throw new DecodeError('a stored message without a body');
  return out;
}

/** A message published over 0-9-1 (or sent over SQS, with no properties), as RabbitMQ 4 converts it. */
function convertedMessage(c: AmqpContent): Message {
  const p = propertiesFromRaw(c.properties);
  const header: Value[] = [];
  if (p.deliveryMode === 2) header[HEADER.durable] = v.bool(true);
  if (p.priority !== undefined) header[HEADER.priority] = v.ubyte(p.priority);
  const ttl = p.expiration === undefined ? undefined : Number(p.expiration);
  if (ttl !== undefined && Number.isSafeInteger(ttl) && ttl >= 0 && ttl < 2 ** 32) header[HEADER.ttl] = v.uint(ttl);
  const props: Value[] = [];
  if (p.messageId !== undefined) props[PROPS.messageId] = v.string(p.messageId);
  if (p.userId !== undefined) props[PROPS.userId] = v.binary(Buffer.from(p.userId, 'utf8'));
  if (p.type !== undefined) props[PROPS.subject] = v.string(p.type);
  if (p.replyTo !== undefined) props[PROPS.replyTo] = v.string(p.replyTo);
  if (p.correlationId !== undefined) props[PROPS.correlationId] = v.string(p.correlationId);
  if (p.contentType !== undefined && p.contentType !== AMQP_ENCODED) props[PROPS.contentType] = v.symbol(p.contentType);
  if (p.contentEncoding !== undefined) props[PROPS.contentEncoding] = v.symbol(p.contentEncoding);
  if (p.timestamp !== undefined) props[PROPS.creationTime] = v.timestamp(Number(p.timestamp) * 1000);
  const app = v.map();
  const annotations = v.map();
  for (const [k, f] of p.headers ?? []) {
    const x = amqpValueOf(f);
    if (!x) continue;
    if (k.startsWith('x-')) annotations.value.set(v.symbol(k), x);
    else app.value.set(v.string(k), x);
  }
  if (p.appId !== undefined) annotations.value.set(v.symbol('x-basic-app-id'), v.string(p.appId));
  const fill = (l: Value[]) => Array.from(l, (x): Value => x ?? NULL);
  return {
    header: header.length ? fill(header) : undefined,
    properties: props.length ? fill(props) : undefined,
    applicationProperties: app.value.size ? app : undefined,
    messageAnnotations: annotations.value.size ? annotations : undefined,
    body: p.contentType === AMQP_ENCODED ? bodySections(c.body) : [dataSection(c.body)],
  };
}

/** x-opt-deaths (newest first, the seed's keys and types) and the x-first-death-* and x-last-death-* annotations. */
function deathAnnotations(deaths: Death[]): [string, Value][] {
  const first = firstDeathEntry(deaths)!;
  const last = deaths[0]!;
  return [
    ['x-opt-deaths', { type: 'array', code: 0xd1, value: deaths.map(deathMap) }],
    ['x-first-death-queue', v.string(first.queue)],
    ['x-first-death-reason', v.string(first.reason)],
    ['x-first-death-exchange', v.string(first.exchange ?? '')],
    ['x-last-death-queue', v.string(last.queue)],
    ['x-last-death-reason', v.string(last.reason)],
    ['x-last-death-exchange', v.string(last.exchange ?? '')],
  ];
}

function deathMap(d: Death): MapValue {
  const entries: [string, Value][] = [
    ['queue', v.string(d.queue)],
    ['reason', v.symbol(d.reason)],
    ['count', v.ulong(d.count)],
    ['first-time', v.timestamp(d.firstTime)],
    ['last-time', v.timestamp(d.lastTime)],
    ['exchange', v.string(d.exchange ?? '')],
    ['routing-keys', v.stringArray(d.routingKeys ?? [d.queue])],
  ];
  const ttl = d.originalExpiration === undefined ? undefined : Number(d.originalExpiration);
  if (ttl !== undefined && Number.isSafeInteger(ttl) && ttl >= 0 && ttl < 2 ** 32) entries.push(['ttl', v.uint(ttl)]);
  return v.symbolMap(entries);
}

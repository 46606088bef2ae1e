import { Decoder, DecodeError } from './codec.js';
import { Encoder } from './encoder.js';
import { compositeOf, composite } from './frames.js';
import { v, type MapValue, type Value } from './types.js';

/** Section descriptors of a message (the spec's part 3). */
export const SECTION = {
  header: 0x70,
  deliveryAnnotations: 0x71,
  messageAnnotations: 0x72,
  properties: 0x73,
  applicationProperties: 0x74,
  data: 0x75,
  amqpSequence: 0x76,
  amqpValue: 0x77,
  footer: 0x78,
} as const;

/** The header's fields, by position. */
export const HEADER = { durable: 0, priority: 1, ttl: 2, firstAcquirer: 3, deliveryCount: 4 } as const;
/** The properties' fields, by position. */
export const PROPS = {
  messageId: 0,
  userId: 1,
  to: 2,
  subject: 3,
  replyTo: 4,
  correlationId: 5,
  contentType: 6,
  contentEncoding: 7,
  absoluteExpiryTime: 8,
  creationTime: 9,
  groupId: 10,
  groupSequence: 11,
  replyToGroupId: 12,
} as const;

/** A message as sections; delivery annotations and the footer are dropped (they are hop-by-hop). */
export interface Message {
  header?: Value[];
  messageAnnotations?: MapValue;
  properties?: Value[];
  applicationProperties?: MapValue;
  /** The body sections, as sent: data sections, amqp-sequence sections or one amqp-value. */
  body: Value[];
}

const described = (x: Value) => (x.type === 'described' ? x : undefined);

/** Reads a transfer's payload (the whole message once every frame of it has come). */
export function decodeMessage(payload: Buffer): Message {
  const d = new Decoder(payload);
  const m: Message = { body: [] };
  while (!d.done) {
    const s = d.value();
    const c = compositeOf(s);
    const code = c?.code ?? sectionCode(s);
    const inner = described(s)?.value;
    switch (code) {
      case SECTION.header:
        m.header = c?.fields ?? [];
        break;
      case SECTION.properties:
        m.properties = c?.fields ?? [];
        break;
      case SECTION.messageAnnotations:
        m.messageAnnotations = asMap(inner);
        break;
      case SECTION.applicationProperties:
        m.applicationProperties = asMap(inner);
        break;
      case SECTION.deliveryAnnotations:
      case SECTION.footer:
        break;
      case SECTION.data:
        if (inner?.type !== 'binary') throw new DecodeError('a data section that is not binary');
        m.body.push(s);
        break;
      case SECTION.amqpSequence:
      case SECTION.amqpValue:
        m.body.push(s);
        break;
      default:
        throw new DecodeError('an unknown message section');
    }
  }
  return m;
}

function sectionCode(s: Value): number | undefined {
  const d = described(s)?.descriptor;
  return d?.type === 'ulong' && d.value < 0x100n ? Number(d.value) : undefined;
}

function asMap(x: Value | undefined): MapValue {
  if (x?.type !== 'map') throw new DecodeError('an annotations or properties section that is not a map');
  return x;
}

/** Encodes the sections that precede the body, in the spec's order. */
export function encodeSections(m: Omit<Message, 'body'>): Buffer {
  const e = new Encoder();
  if (m.header?.length) e.value(composite(SECTION.header, m.header));
  if (m.messageAnnotations?.value.size) e.value(v.described(SECTION.messageAnnotations, m.messageAnnotations));
  if (m.properties?.length) e.value(composite(SECTION.properties, m.properties));
  if (m.applicationProperties?.value.size) e.value(v.described(SECTION.applicationProperties, m.applicationProperties));
  return e.result();
}

export function encodeBody(body: Value[]): Buffer {
  const e = new Encoder();
  for (const s of body) e.value(s);
  return e.result();
}

export function encodeMessage(m: Message): Buffer {
  return Buffer.concat([encodeSections(m), encodeBody(m.body)]);
}

export const dataSection = (b: Buffer): Value => v.described(SECTION.data, v.binary(b));
export const valueSection = (x: Value): Value => v.described(SECTION.amqpValue, x);

/** The header or properties list with field `i` set (the list grown with nulls as needed). */
export function withField(list: Value[] | undefined, i: number, x: Value | undefined): Value[] {
  const out = [...(list ?? [])];
  while (out.length <= i) out.push({ type: 'null' });
  out[i] = x ?? { type: 'null' };
  return out;
}

import type { AmqpPropertyCodec } from '../../engine/amqp/message-view.js';
import { plainTable, type FieldTable, type FieldValue } from './codec.js';
import { senderSelected } from './death-headers.js';
import { propertiesFromRaw, rawProperties, type Properties } from './properties.js';

/**
 * AMQP content properties as JSON, for PeekMessages, the console and export/import
 * (docs/amqp.md). Property names are amqplib's; the timestamp is epoch seconds. Each
 * header value keeps its field type: `{"type": "I", "value": 5}`. Strings (`S`, and
 * byte arrays `x`) are text when they are UTF-8, else `{"type": "x", "base64": "…"}`;
 * 64-bit integers (`l`, `T`) are numbers when exact, else decimal strings; decimals (`D`)
 * are `{"places": 2, "digits": 1234}`; arrays (`A`) and tables (`F`) nest.
 */

const STRINGS = [
  'contentType',
  'contentEncoding',
  'correlationId',
  'replyTo',
  'expiration',
  'messageId',
  'type',
  'userId',
  'appId',
  'clusterId',
] as const;
const OCTETS = ['deliveryMode', 'priority'] as const;
const NAMES: readonly string[] = [...STRINGS, ...OCTETS, 'headers', 'timestamp'];
/** Nesting allowed in imported headers (RabbitMQ's own tables nest two or three deep). */
const MAX_DEPTH = 16;

const utf8 = new TextDecoder('utf-8', { fatal: true });
function text(b: Buffer): { value: string } | { base64: string } {
  try {
    return { value: utf8.decode(b) };
  } catch {
    return { base64: b.toString('base64') };
  }
}

const big = (v: bigint): number | string =>
  v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(v) : v.toString();
const float = (v: number): number | string => (Number.isFinite(v) ? v : String(v));

function valueToJson(v: FieldValue): Record<string, unknown> {
  switch (v.type) {
    case 'S':
    case 'x':
      return { type: v.type, ...text(v.value) };
    case 'l':
    case 'T':
      return { type: v.type, value: big(v.value) };
    case 'f':
    case 'd':
      return { type: v.type, value: float(v.value) };
    case 'A':
      return { type: 'A', value: v.value.map(valueToJson) };
    case 'F':
      return { type: 'F', value: tableToJson(v.value) };
    default:
      return { type: v.type, value: v.value };
  }
}

/** Null-prototype: the keys are the publisher's. */
function tableToJson(t: FieldTable): Record<string, unknown> {
  const out: Record<string, unknown> = Object.create(null);
  for (const [k, v] of t) out[k] = valueToJson(v);
  return out;
}

function fail(where: string, what: string): never {
  throw new Error(`${where} ${what}`);
}

function int(v: unknown, where: string, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
    fail(where, `must be a whole number from ${min} to ${max}.`);
  return v;
}

function bigint(v: unknown, where: string, signed: boolean): bigint {
  const ok = (typeof v === 'number' && Number.isSafeInteger(v)) || (typeof v === 'string' && /^-?\d{1,20}$/.test(v));
  if (!ok) fail(where, 'must be a whole number (a decimal string when not exact as a JSON number).');
  const n = BigInt(v as number | string);
  const [min, max] = signed ? [-(1n << 63n), (1n << 63n) - 1n] : [0n, (1n << 64n) - 1n];
  if (n < min || n > max) fail(where, `is out of range for a ${signed ? 'signed' : 'unsigned'} 64-bit integer.`);
  return n;
}

function floatOf(v: unknown, where: string): number {
  if (typeof v === 'number') return v;
  if (v === 'NaN' || v === 'Infinity' || v === '-Infinity') return Number(v);
  fail(where, 'must be a number.');
}

const RANGES: Record<string, [number, number]> = {
  b: [-128, 127],
  B: [0, 255],
  s: [-32768, 32767],
  u: [0, 65535],
  I: [-(2 ** 31), 2 ** 31 - 1],
  i: [0, 2 ** 32 - 1],
};

function valueFromJson(j: unknown, where: string, depth = 0): FieldValue {
  if (depth > MAX_DEPTH) fail(where, `nests deeper than ${MAX_DEPTH}.`);
  if (!j || typeof j !== 'object' || Array.isArray(j)) fail(where, 'must be {"type": …, "value": …}.');
  const o = j as Record<string, unknown>;
  const type = o.type;
  const v = o.value;
  switch (type) {
    case 't':
      if (typeof v !== 'boolean') fail(where, 'must be true or false.');
      return { type, value: v };
    case 'b':
    case 'B':
    case 's':
    case 'u':
    case 'I':
    case 'i':
      return { type, value: int(v, where, ...RANGES[type]!) };
    case 'l':
    case 'T':
      return { type, value: bigint(v, where, type === 'l') };
    case 'f':
    case 'd':
      return { type, value: floatOf(v, where) };
    case 'S':
    case 'x':
      if (typeof o.base64 === 'string' && v === undefined) return { type, value: Buffer.from(o.base64, 'base64') };
      if (typeof v !== 'string') fail(where, 'must have a "value" string or a "base64" string.');
      return { type, value: Buffer.from(v, 'utf8') };
    case 'D': {
      const d = v as { places?: unknown; digits?: unknown } | null;
      if (!d || typeof d !== 'object') fail(where, 'must be {"places": …, "digits": …}.');
      return {
        type,
        value: {
          places: int(d.places, `${where}.places`, 0, 255),
          digits: int(d.digits, `${where}.digits`, 0, 2 ** 32 - 1),
        },
      };
    }
    case 'A':
      if (!Array.isArray(v)) fail(where, 'must have an array "value".');
      return { type, value: v.map((x, i) => valueFromJson(x, `${where}[${i}]`, depth + 1)) };
    case 'F':
      return { type, value: tableFromJson(v, where, depth + 1) };
    case 'V':
      return { type, value: null };
    default:
      fail(where, `has an unknown field type ${JSON.stringify(type)}.`);
  }
}

function tableFromJson(j: unknown, where: string, depth = 0): FieldTable {
  if (!j || typeof j !== 'object' || Array.isArray(j)) fail(where, 'must be an object of typed values.');
  const t: FieldTable = new Map();
  for (const [k, v] of Object.entries(j)) {
    if (Buffer.byteLength(k) > 255) fail(where, `has a name over 255 bytes: ${k.slice(0, 40)}…`);
    t.set(k, valueFromJson(v, `${where}.${k}`, depth));
  }
  return t;
}

function propertiesToJson(raw: Buffer): Record<string, unknown> {
  const p = propertiesFromRaw(raw);
  const out: Record<string, unknown> = Object.create(null);
  for (const [k, v] of Object.entries(p)) {
    if (v === undefined) continue;
    out[k] = k === 'headers' ? tableToJson(v as FieldTable) : k === 'timestamp' ? big(v as bigint) : v;
  }
  return out;
}

function propertiesFromJson(j: unknown): ReturnType<AmqpPropertyCodec['fromJson']> {
  if (!j || typeof j !== 'object' || Array.isArray(j)) fail('Properties', 'must be an object.');
  const o = j as Record<string, unknown>;
  const unknown = Object.keys(o).find((k) => !NAMES.includes(k));
  if (unknown) fail('Properties', `has an unknown property ${unknown}.`);
  const p: Properties = Object.create(null);
  for (const k of STRINGS) {
    const v = o[k];
    if (v === undefined) continue;
    if (typeof v !== 'string' || Buffer.byteLength(v) > 255) fail(k, 'must be a string of at most 255 bytes.');
    p[k] = v;
  }
  for (const k of OCTETS) if (o[k] !== undefined) p[k] = int(o[k], k, 0, 255);
  if (o.timestamp !== undefined) p.timestamp = bigint(o.timestamp, 'timestamp', false);
  if (o.headers !== undefined) p.headers = tableFromJson(o.headers, 'headers');
  if (p.expiration !== undefined && !/^\d+$/.test(p.expiration))
    fail('expiration', 'must be milliseconds as a decimal string.');
  const raw = rawProperties(p);
  // BCC was removed when the message was published; one given here would be delivered.
  const { cc, properties } = senderSelected(raw, p.headers);
  return { raw: properties, headers: p.headers && plainTable(p.headers), expiration: p.expiration, cc };
}

/** The codec the engine is given (EngineOptions.amqpCodec). */
export const amqpPropertyCodec: AmqpPropertyCodec = { toJson: propertiesToJson, fromJson: propertiesFromJson };

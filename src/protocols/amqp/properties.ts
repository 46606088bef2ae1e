import { DecodeError, Reader, Writer, type FieldTable } from './codec.js';

/** The basic class's content properties, in flag order (bit 15 first). */
const FIELDS = [
  ['contentType', 'shortstr'],
  ['contentEncoding', 'shortstr'],
  ['headers', 'table'],
  ['deliveryMode', 'octet'],
  ['priority', 'octet'],
  ['correlationId', 'shortstr'],
  ['replyTo', 'shortstr'],
  ['expiration', 'shortstr'],
  ['messageId', 'shortstr'],
  ['timestamp', 'timestamp'],
  ['type', 'shortstr'],
  ['userId', 'shortstr'],
  ['appId', 'shortstr'],
  ['clusterId', 'shortstr'],
] as const;

export interface Properties {
  contentType?: string;
  contentEncoding?: string;
  headers?: FieldTable;
  deliveryMode?: number;
  priority?: number;
  correlationId?: string;
  replyTo?: string;
  expiration?: string;
  messageId?: string;
  timestamp?: bigint;
  type?: string;
  userId?: string;
  appId?: string;
  clusterId?: string;
}

export interface ContentHeader {
  classId: number;
  bodySize: number;
  properties: Properties;
  /** The property flags and list exactly as received, to store and send on unchanged. */
  raw: Buffer;
}

const USER_ID_FLAG = 1 << (15 - FIELDS.findIndex(([name]) => name === 'userId'));

/**
 * A content header's `user-id` property, if it has one. Only the first flags word is read
 * unless the property is there (rare), so a publish pays nothing for the check.
 */
export function userIdOf(payload: Buffer): string | undefined {
  if (payload.length < 14 || (payload.readUInt16BE(12) & USER_ID_FLAG) === 0) return undefined;
  return decodeHeader(payload).properties.userId;
}

export function decodeHeader(payload: Buffer): ContentHeader {
  const r = new Reader(payload);
  const classId = r.short();
  r.short(); // weight, always 0
  const size = r.longlong();
  if (size > BigInt(Number.MAX_SAFE_INTEGER)) throw new DecodeError('body size out of range');
  const rawStart = r.offset;
  const properties = decodeProperties(r);
  return { classId, bodySize: Number(size), properties, raw: payload.subarray(rawStart) };
}

/** Reads property flags (possibly chained) and the properties they announce. */
function decodeProperties(r: Reader): Properties {
  const flags: number[] = [];
  for (;;) {
    const f = r.short();
    flags.push(f);
    if ((f & 1) === 0) break;
  }
  const out: Record<string, unknown> = {};
  FIELDS.forEach(([name, type], i) => {
    const word = flags[Math.floor(i / 15)] ?? 0;
    if ((word & (1 << (15 - (i % 15)))) === 0) return;
    // allow-dynamic-key: the property names of FIELDS, never the client's.
    out[name] =
      type === 'shortstr' ? r.shortstr() : type === 'octet' ? r.octet() : type === 'table' ? r.table() : r.longlong();
  });
  if (!r.done) throw new DecodeError('bytes after the content properties');
  return out as Properties;
}

/** Writes property flags and list (the part of a content header after the body size). */
function encodeProperties(w: Writer, p: Properties): void {
  let flags = 0;
  FIELDS.forEach(([name], i) => {
    if (p[name] !== undefined) flags |= 1 << (15 - i);
  });
  w.short(flags);
  for (const [name, type] of FIELDS) {
    const v = p[name];
    if (v === undefined) continue;
    if (type === 'shortstr') w.shortstr(v as string);
    else if (type === 'octet') w.octet(v as number);
    else if (type === 'table') w.table(v as FieldTable);
    else w.longlong(v as bigint);
  }
}

/** Properties from stored raw bytes (as decodeHeader kept them). */
export function propertiesFromRaw(raw: Buffer): Properties {
  return decodeProperties(new Reader(raw));
}

export function rawProperties(p: Properties): Buffer {
  const w = new Writer(64);
  encodeProperties(w, p);
  return w.result();
}

import { Decoder, DecodeError } from './codec.js';
import { Encoder } from './encoder.js';
import { NULL, type Value } from './types.js';

/** The frame types: AMQP (performatives) and SASL. */
export const FRAME_AMQP = 0;
export const FRAME_SASL = 1;

/** The smallest max-frame-size a peer may ask for (the spec's MIN-MAX-FRAME-SIZE). */
export const MIN_MAX_FRAME_SIZE = 512;

/** Descriptor codes of the performatives, SASL frames and the types they carry. */
export const CODE = {
  open: 0x10,
  begin: 0x11,
  attach: 0x12,
  flow: 0x13,
  transfer: 0x14,
  disposition: 0x15,
  detach: 0x16,
  end: 0x17,
  close: 0x18,
  error: 0x1d,
  received: 0x23,
  accepted: 0x24,
  rejected: 0x25,
  released: 0x26,
  modified: 0x27,
  source: 0x28,
  target: 0x29,
  coordinator: 0x30,
  saslMechanisms: 0x40,
  saslInit: 0x41,
  saslOutcome: 0x44,
} as const;

/** Descriptors sent as symbols map to the same codes (the spec allows either). */
const SYMBOLIC: ReadonlyMap<string, number> = new Map([
  ['amqp:open:list', 0x10],
  ['amqp:begin:list', 0x11],
  ['amqp:attach:list', 0x12],
  ['amqp:flow:list', 0x13],
  ['amqp:transfer:list', 0x14],
  ['amqp:disposition:list', 0x15],
  ['amqp:detach:list', 0x16],
  ['amqp:end:list', 0x17],
  ['amqp:close:list', 0x18],
  ['amqp:error:list', 0x1d],
  ['amqp:accepted:list', 0x24],
  ['amqp:rejected:list', 0x25],
  ['amqp:released:list', 0x26],
  ['amqp:modified:list', 0x27],
  ['amqp:source:list', 0x28],
  ['amqp:target:list', 0x29],
  ['amqp:sasl-init:list', 0x41],
  ['amqp:sasl-response:list', 0x43],
]);

/** A received frame. */
export interface Frame {
  type: number;
  channel: number;
  body: Buffer;
}

/** A described list (a performative, an outcome, a source or target): its code and fields. */
export interface Composite {
  code: number;
  fields: Value[];
}

/** Cuts frames out of the byte stream; a size over `maxFrameSize` or under the header is a framing error. */
export class FrameParser {
  private buf: Buffer = Buffer.alloc(0);

  constructor(public maxFrameSize: number) {}

  /** Appends bytes and cuts every whole frame out of them. */
  push(chunk: Buffer): Frame[] {
    this.append(chunk);
    const out: Frame[] = [];
    for (let f = this.next(); f; f = this.next()) out.push(f);
    return out;
  }

  append(chunk: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
  }

  /** The next whole frame, or undefined until more bytes come. */
  next(): Frame | undefined {
    const buf = this.buf;
    if (buf.length < 8) return undefined;
    const size = buf.readUInt32BE(0);
    const doff = buf[4]!;
    if (size < 8 || doff < 2 || doff * 4 > size) throw new DecodeError(`a frame of ${size} bytes with doff ${doff}`);
    if (size > this.maxFrameSize) throw new DecodeError(`a frame of ${size} bytes (max ${this.maxFrameSize})`);
    if (buf.length < size) return undefined;
    this.buf = buf.subarray(size);
    return { type: buf[5]!, channel: buf.readUInt16BE(6), body: buf.subarray(doff * 4, size) };
  }

  /** What is buffered and not a frame yet (the protocol header that follows SASL), taken out. */
  takeRest(): Buffer {
    const rest = this.buf;
    this.buf = Buffer.alloc(0);
    return rest;
  }
}

/** The composite a value holds (a described list), or undefined. */
export function compositeOf(x: Value | undefined): Composite | undefined {
  if (x?.type !== 'described') return undefined;
  const d = x.descriptor;
  const code =
    d.type === 'ulong' ? Number(d.value & 0xffffffffn) : d.type === 'symbol' ? SYMBOLIC.get(d.value) : undefined;
  if (code === undefined || (d.type === 'ulong' && d.value >> 32n !== 0n)) return undefined;
  if (x.value.type !== 'list') return undefined;
  return { code, fields: x.value.value };
}

/** A frame body's performative, and the payload after it (a transfer's message bytes). */
export function decodePerformative(body: Buffer): { performative: Composite; payload: Buffer } {
  const d = new Decoder(body);
  const p = compositeOf(d.value());
  if (!p) throw new DecodeError('a frame body that is not a performative');
  return { performative: p, payload: body.subarray(d.offset) };
}

/** Field `i` of a composite; null counts as absent. */
export function field(c: Composite | undefined, i: number): Value | undefined {
  const x = c?.fields[i];
  return x === undefined || x.type === 'null' ? undefined : x;
}

/** A described list with trailing absent fields left out. */
export function composite(code: number, fields: (Value | undefined)[]): Value {
  let n = fields.length;
  while (n > 0 && fields[n - 1] === undefined) n--;
  return {
    type: 'described',
    descriptor: { type: 'ulong', value: BigInt(code) },
    value: { type: 'list', value: fields.slice(0, n).map((f) => f ?? NULL) },
  };
}

/** One frame: header, performative, payload. */
export function frame(type: number, channel: number, performative: Value, payload?: Buffer): Buffer {
  const e = new Encoder();
  e.raw(Buffer.alloc(8));
  e.value(performative);
  if (payload) e.raw(payload);
  const out = e.result();
  out.writeUInt32BE(out.length, 0);
  out[4] = 2;
  out[5] = type;
  out.writeUInt16BE(channel, 6);
  return out;
}

/** The bytes a transfer frame takes besides its payload, so a payload can be cut to fit max-frame-size. */
export function frameOverhead(performative: Value): number {
  return frame(FRAME_AMQP, 0, performative).length;
}

/** An empty frame: a heartbeat. */
export const EMPTY_FRAME = Buffer.from([0, 0, 0, 8, 2, 0, 0, 0]);

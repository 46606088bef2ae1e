import type { Value } from './types.js';

/**
 * AMQP 1.0's encoding (the spec's part 1): a decoder that never trusts a length or a
 * count (each is checked against the bytes left, nesting is bounded) and an encoder that
 * picks the compact forms. Malformed input is a DecodeError, which the connection turns
 * into `amqp:decode-error`.
 */
export class DecodeError extends Error {
  override readonly name = 'Amqp10DecodeError';
}

/** Deepest nesting of lists, maps, arrays and described values accepted. */
const MAX_DEPTH = 32;

/** Fixed widths of the primitive constructors (bytes after the constructor). */
const FIXED: ReadonlyMap<number, number> = new Map([
  ...[0x40, 0x41, 0x42, 0x43, 0x44, 0x45].map((c) => [c, 0] as const),
  ...[0x50, 0x51, 0x52, 0x53, 0x54, 0x55, 0x56].map((c) => [c, 1] as const),
  ...[0x60, 0x61].map((c) => [c, 2] as const),
  ...[0x70, 0x71, 0x72, 0x73, 0x74].map((c) => [c, 4] as const),
  ...[0x80, 0x81, 0x82, 0x83, 0x84].map((c) => [c, 8] as const),
  ...[0x94, 0x98].map((c) => [c, 16] as const),
]);

export class Decoder {
  offset: number;
  constructor(
    readonly buf: Buffer,
    offset = 0,
    private readonly end = buf.length,
  ) {
    this.offset = offset;
  }

  get done(): boolean {
    return this.offset >= this.end;
  }

  private take(n: number): number {
    if (n < 0 || this.offset + n > this.end) throw new DecodeError(`truncated: ${n} bytes needed at ${this.offset}`);
    const at = this.offset;
    this.offset += n;
    return at;
  }

  private u8(): number {
    return this.buf[this.take(1)]!;
  }

  /** One value (a described value, or a primitive). */
  value(depth = 0): Value {
    if (depth > MAX_DEPTH) throw new DecodeError('values nested too deep');
    const code = this.u8();
    if (code === 0x00) {
      const descriptor = this.value(depth + 1);
      return { type: 'described', descriptor, value: this.value(depth + 1) };
    }
    return this.primitive(code, depth);
  }

  private primitive(code: number, depth: number): Value {
    const b = this.buf;
    const fixed = FIXED.get(code);
    const at = fixed === undefined ? 0 : this.take(fixed);
    switch (code) {
      case 0x40:
        return { type: 'null' };
      case 0x41:
        return { type: 'bool', value: true };
      case 0x42:
        return { type: 'bool', value: false };
      case 0x56: {
        const x = b[at]!;
        if (x > 1) throw new DecodeError(`boolean ${x}`);
        return { type: 'bool', value: x === 1 };
      }
      case 0x50:
        return { type: 'ubyte', value: b[at]! };
      case 0x51:
        return { type: 'byte', value: b.readInt8(at) };
      case 0x60:
        return { type: 'ushort', value: b.readUInt16BE(at) };
      case 0x61:
        return { type: 'short', value: b.readInt16BE(at) };
      case 0x70:
        return { type: 'uint', value: b.readUInt32BE(at) };
      case 0x52:
        return { type: 'uint', value: b[at]! };
      case 0x43:
        return { type: 'uint', value: 0 };
      case 0x71:
        return { type: 'int', value: b.readInt32BE(at) };
      case 0x54:
        return { type: 'int', value: b.readInt8(at) };
      case 0x80:
        return { type: 'ulong', value: b.readBigUInt64BE(at) };
      case 0x53:
        return { type: 'ulong', value: BigInt(b[at]!) };
      case 0x44:
        return { type: 'ulong', value: 0n };
      case 0x81:
        return { type: 'long', value: b.readBigInt64BE(at) };
      case 0x55:
        return { type: 'long', value: BigInt(b.readInt8(at)) };
      case 0x72:
        return { type: 'float', value: b.readFloatBE(at) };
      case 0x82:
        return { type: 'double', value: b.readDoubleBE(at) };
      case 0x73:
        return { type: 'char', value: b.readUInt32BE(at) };
      case 0x83:
        return { type: 'timestamp', value: b.readBigInt64BE(at) };
      case 0x74:
        return { type: 'decimal32', value: Buffer.from(b.subarray(at, at + 4)) };
      case 0x84:
        return { type: 'decimal64', value: Buffer.from(b.subarray(at, at + 8)) };
      case 0x94:
        return { type: 'decimal128', value: Buffer.from(b.subarray(at, at + 16)) };
      case 0x98:
        return { type: 'uuid', value: Buffer.from(b.subarray(at, at + 16)) };
      case 0xa0:
      case 0xb0:
        return { type: 'binary', value: Buffer.from(this.bytes(code === 0xa0 ? 1 : 4)) };
      case 0xa1:
      case 0xb1:
        return { type: 'string', value: this.utf8(this.bytes(code === 0xa1 ? 1 : 4)) };
      case 0xa3:
      case 0xb3:
        return { type: 'symbol', value: this.bytes(code === 0xa3 ? 1 : 4).toString('latin1') };
      case 0x45:
        return { type: 'list', value: [] };
      case 0xc0:
      case 0xd0:
        return { type: 'list', value: this.compound(code === 0xc0 ? 1 : 4, depth) };
      case 0xc1:
      case 0xd1: {
        const items = this.compound(code === 0xc1 ? 1 : 4, depth);
        if (items.length % 2) throw new DecodeError('a map with an odd number of items');
        const m = new Map<Value, Value>();
        for (let i = 0; i < items.length; i += 2) m.set(items[i]!, items[i + 1]!);
        return { type: 'map', value: m };
      }
      case 0xe0:
      case 0xf0:
        return this.array(code === 0xe0 ? 1 : 4, depth);
      default:
        throw new DecodeError(`unknown constructor 0x${code.toString(16)}`);
    }
  }

  private width(w: 1 | 4): number {
    return w === 1 ? this.u8() : this.buf.readUInt32BE(this.take(4));
  }

  private bytes(w: 1 | 4): Buffer {
    const n = this.width(w);
    const at = this.take(n);
    return this.buf.subarray(at, at + n);
  }

  private utf8(bytes: Buffer): string {
    try {
      return UTF8.decode(bytes);
    } catch {
      throw new DecodeError('a string that is not UTF-8');
    }
  }

  /** A list's or map's items: size and count, each bounded by the bytes there are. */
  private compound(w: 1 | 4, depth: number): Value[] {
    const size = this.width(w);
    const start = this.take(size);
    const inner = new Decoder(this.buf, start, start + size);
    const count = inner.width(w);
    if (count > size) throw new DecodeError(`a count of ${count} in ${size} bytes`);
    const items: Value[] = [];
    for (let i = 0; i < count; i++) items.push(inner.value(depth + 1));
    if (!inner.done) throw new DecodeError('bytes after the last item');
    return items;
  }

  private array(w: 1 | 4, depth: number): Value {
    const size = this.width(w);
    const start = this.take(size);
    const inner = new Decoder(this.buf, start, start + size);
    const count = inner.width(w);
    // Elements of width 0 (null, true) take no bytes: the size still bounds the count.
    if (count > size) throw new DecodeError(`a count of ${count} in ${size} bytes`);
    let code = inner.u8();
    let descriptor: Value | undefined;
    if (code === 0x00) {
      descriptor = inner.value(depth + 1);
      code = inner.u8();
    }
    if (code === 0x00) throw new DecodeError('an array of described descriptors');
    const items: Value[] = [];
    for (let i = 0; i < count; i++) {
      const x = inner.primitive(code, depth + 1);
      items.push(descriptor ? { type: 'described', descriptor, value: x } : x);
    }
    if (!inner.done) throw new DecodeError('bytes after the last element');
    return descriptor ? { type: 'array', code, descriptor, value: items } : { type: 'array', code, value: items };
  }
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Decodes exactly one value filling `buf`. */
export function decodeValue(buf: Buffer): Value {
  const d = new Decoder(buf);
  const x = d.value();
  if (!d.done) throw new DecodeError('bytes after the value');
  return x;
}

export class Encoder {
  private buf = Buffer.allocUnsafe(256);
  private at = 0;

  private room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.at + n));
    this.buf.copy(next, 0, 0, this.at);
    this.buf = next;
  }

  u8(x: number): void {
    this.room(1);
    this.buf[this.at++] = x;
  }

  raw(b: Buffer): void {
    this.room(b.length);
    b.copy(this.buf, this.at);
    this.at += b.length;
  }

  result(): Buffer {
    return Buffer.from(this.buf.subarray(0, this.at));
  }

  value(x: Value): void {
    if (x.type === 'described') {
      this.u8(0);
      this.value(x.descriptor);
      this.value(x.value);
      return;
    }
    const code = constructorOf(x);
    this.u8(code);
    this.body(code, x);
  }

  /** The bytes after the constructor. */
  private body(code: number, x: Value): void {
    const n = FIXED.get(code);
    if (n !== undefined) {
      this.room(n);
      fixedBody(this.buf, this.at, code, x);
      this.at += n;
      return;
    }
    switch (x.type) {
      case 'binary':
        return this.sized(code === 0xa0 ? 1 : 4, x.value);
      case 'string':
        return this.sized(code === 0xa1 ? 1 : 4, Buffer.from(x.value, 'utf8'));
      case 'symbol':
        return this.sized(code === 0xa3 ? 1 : 4, Buffer.from(x.value, 'latin1'));
      case 'list':
        return this.compound(x.value);
      case 'map':
        return this.compound([...x.value].flat());
      case 'array':
        return this.arrayBody(x);
      default:
        throw new Error(`cannot encode ${x.type} with 0x${code.toString(16)}`);
    }
  }

  private sized(w: 1 | 4, b: Buffer): void {
    if (w === 1) this.u8(b.length);
    else this.u32(b.length);
    this.raw(b);
  }

  private u32(n: number): void {
    this.room(4);
    this.buf.writeUInt32BE(n, this.at);
    this.at += 4;
  }

  /** Always the 32-bit form (the constructor chosen is 0xd0 / 0xd1 for non-empty). */
  private compound(items: Value[]): void {
    const inner = new Encoder();
    for (const i of items) inner.value(i);
    const b = inner.result();
    this.u32(b.length + 4);
    this.u32(items.length);
    this.raw(b);
  }

  private arrayBody(x: Extract<Value, { type: 'array' }>): void {
    const inner = new Encoder();
    if (x.descriptor) {
      inner.u8(0);
      inner.value(x.descriptor);
    }
    inner.u8(x.code);
    for (const item of x.value) inner.body(x.code, item.type === 'described' ? item.value : item);
    const b = inner.result();
    this.u32(b.length + 4);
    this.u32(x.value.length);
    this.raw(b);
  }
}

function constructorOf(x: Value): number {
  switch (x.type) {
    case 'null':
      return 0x40;
    case 'bool':
      return x.value ? 0x41 : 0x42;
    case 'ubyte':
      return 0x50;
    case 'byte':
      return 0x51;
    case 'ushort':
      return 0x60;
    case 'short':
      return 0x61;
    case 'uint':
      return x.value === 0 ? 0x43 : x.value < 256 ? 0x52 : 0x70;
    case 'int':
      return x.value >= -128 && x.value < 128 ? 0x54 : 0x71;
    case 'ulong':
      return x.value === 0n ? 0x44 : x.value < 256n ? 0x53 : 0x80;
    case 'long':
      return x.value >= -128n && x.value < 128n ? 0x55 : 0x81;
    case 'float':
      return 0x72;
    case 'double':
      return 0x82;
    case 'char':
      return 0x73;
    case 'timestamp':
      return 0x83;
    case 'decimal32':
      return 0x74;
    case 'decimal64':
      return 0x84;
    case 'decimal128':
      return 0x94;
    case 'uuid':
      return 0x98;
    case 'binary':
      return x.value.length < 256 ? 0xa0 : 0xb0;
    case 'string':
      return Buffer.byteLength(x.value) < 256 ? 0xa1 : 0xb1;
    case 'symbol':
      return x.value.length < 256 ? 0xa3 : 0xb3;
    case 'list':
      return x.value.length ? 0xd0 : 0x45;
    case 'map':
      return 0xd1;
    case 'array':
      return 0xf0;
    case 'described':
      return 0x00;
  }
}

function fixedBody(b: Buffer, at: number, code: number, x: Value): void {
  const n = (x as { value: unknown }).value;
  switch (code) {
    case 0x50:
    case 0x52:
      b[at] = n as number;
      return;
    case 0x51:
    case 0x54:
      b.writeInt8(n as number, at);
      return;
    case 0x53:
      b[at] = Number(n as bigint);
      return;
    case 0x55:
      b.writeInt8(Number(n as bigint), at);
      return;
    case 0x56:
      b[at] = n ? 1 : 0;
      return;
    case 0x60:
      b.writeUInt16BE(n as number, at);
      return;
    case 0x61:
      b.writeInt16BE(n as number, at);
      return;
    case 0x70:
    case 0x73:
      b.writeUInt32BE(n as number, at);
      return;
    case 0x71:
      b.writeInt32BE(n as number, at);
      return;
    case 0x72:
      b.writeFloatBE(n as number, at);
      return;
    case 0x80:
      b.writeBigUInt64BE(n as bigint, at);
      return;
    case 0x81:
    case 0x83:
      b.writeBigInt64BE(n as bigint, at);
      return;
    case 0x82:
      b.writeDoubleBE(n as number, at);
      return;
    case 0x74:
    case 0x84:
    case 0x94:
    case 0x98:
      (n as Buffer).copy(b, at);
      return;
    default:
      return; // width 0: the constructor says it all
  }
}

export function encodeValue(x: Value): Buffer {
  const e = new Encoder();
  e.value(x);
  return e.result();
}

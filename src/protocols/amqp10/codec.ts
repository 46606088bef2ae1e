import type { Value } from './types.js';

/**
 * AMQP 1.0's encoding (the spec's part 1), decoding side: a decoder that never trusts a
 * length or a count (each is checked against the bytes left, nesting is bounded); the
 * encoder is encoder.ts. Malformed input is a DecodeError, which the connection turns
 * into `amqp:decode-error`.
 */
export class DecodeError extends Error {
  override readonly name = 'Amqp10DecodeError';
}

/** Deepest nesting of lists, maps, arrays and described values accepted. */
const MAX_DEPTH = 32;

/** Fixed widths of the primitive constructors (bytes after the constructor). */
export const FIXED: ReadonlyMap<number, number> = new Map([
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

import { FIXED } from './codec.js';
import type { Value } from './types.js';

/** AMQP 1.0's encoding, writing side: the compact form of each value where there is one. */
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

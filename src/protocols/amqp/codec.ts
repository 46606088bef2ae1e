/**
 * AMQP 0-9-1's data types: a reader and a writer over buffers, and field tables.
 *
 * Field values keep their wire type, so a table read from a client is written back
 * byte for byte (headers pass through Redrive unchanged). The type letters are
 * RabbitMQ's, which differ from the 0-9-1 spec's errata for a few (`l` is a signed
 * 64-bit integer, `s` a signed 16-bit one, `x` a byte array).
 */

export type FieldValue =
  | { type: 't'; value: boolean }
  | { type: 'b' | 'B' | 's' | 'u' | 'I' | 'i' | 'f' | 'd'; value: number }
  | { type: 'l' | 'T'; value: bigint }
  | { type: 'S' | 'x'; value: Buffer }
  | { type: 'D'; value: { places: number; digits: number } }
  | { type: 'A'; value: FieldValue[] }
  | { type: 'F'; value: FieldTable }
  | { type: 'V'; value: null };

export type FieldTable = Map<string, FieldValue>;

/** Malformed input: the caller turns it into a frame error. */
export class DecodeError extends Error {
  override readonly name = 'DecodeError';
}

export class Reader {
  offset = 0;
  /** Bits are packed into octets; consecutive bit fields share one. */
  private bitByte = 0;
  private bitIndex = 8;

  constructor(readonly buf: Buffer) {}

  private need(n: number): number {
    if (this.offset + n > this.buf.length) throw new DecodeError(`truncated: ${n} more bytes needed at ${this.offset}`);
    this.bitIndex = 8;
    const at = this.offset;
    this.offset += n;
    return at;
  }

  get done(): boolean {
    return this.offset >= this.buf.length;
  }

  octet(): number {
    return this.buf[this.need(1)]!;
  }
  short(): number {
    return this.buf.readUInt16BE(this.need(2));
  }
  long(): number {
    return this.buf.readUInt32BE(this.need(4));
  }
  longlong(): bigint {
    return this.buf.readBigUInt64BE(this.need(8));
  }
  shortstr(): string {
    const n = this.octet();
    const at = this.need(n);
    return this.buf.toString('utf8', at, at + n);
  }
  longstrBytes(): Buffer {
    const n = this.long();
    const at = this.need(n);
    return this.buf.subarray(at, at + n);
  }
  longstr(): string {
    return this.longstrBytes().toString('utf8');
  }
  bit(): boolean {
    if (this.bitIndex >= 8) {
      this.bitByte = this.octet();
      this.bitIndex = 0;
    }
    return ((this.bitByte >> this.bitIndex++) & 1) === 1;
  }
  table(): FieldTable {
    const r = new Reader(this.longstrBytes());
    const out: FieldTable = new Map();
    while (!r.done) {
      const name = r.shortstr();
      out.set(name, r.fieldValue());
    }
    return out;
  }
  private array(): FieldValue[] {
    const r = new Reader(this.longstrBytes());
    const out: FieldValue[] = [];
    while (!r.done) out.push(r.fieldValue());
    return out;
  }
  fieldValue(): FieldValue {
    const type = String.fromCharCode(this.octet());
    const b = this.buf;
    switch (type) {
      case 't':
        return { type, value: this.octet() !== 0 };
      case 'b':
        return { type, value: b.readInt8(this.need(1)) };
      case 'B':
        return { type, value: b.readUInt8(this.need(1)) };
      case 's':
        return { type, value: b.readInt16BE(this.need(2)) };
      case 'u':
        return { type, value: b.readUInt16BE(this.need(2)) };
      case 'I':
        return { type, value: b.readInt32BE(this.need(4)) };
      case 'i':
        return { type, value: b.readUInt32BE(this.need(4)) };
      case 'l':
        return { type, value: b.readBigInt64BE(this.need(8)) };
      case 'T':
        return { type, value: b.readBigUInt64BE(this.need(8)) };
      case 'f':
        return { type, value: b.readFloatBE(this.need(4)) };
      case 'd':
        return { type, value: b.readDoubleBE(this.need(8)) };
      case 'D': {
        const places = this.octet();
        return { type, value: { places, digits: this.long() } };
      }
      case 'S':
      case 'x':
        return { type, value: this.longstrBytes() };
      case 'A':
        return { type, value: this.array() };
      case 'F':
        return { type, value: this.table() };
      case 'V':
        return { type, value: null };
      default:
        throw new DecodeError(`unknown field type ${JSON.stringify(type)}`);
    }
  }
}

export class Writer {
  private buf: Buffer;
  length = 0;
  private bitAt = -1;
  private bitIndex = 8;

  constructor(size = 256) {
    this.buf = Buffer.allocUnsafe(size);
  }

  private room(n: number): number {
    if (this.length + n > this.buf.length) {
      const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.length + n));
      this.buf.copy(next, 0, 0, this.length);
      this.buf = next;
    }
    this.bitIndex = 8;
    const at = this.length;
    this.length += n;
    return at;
  }

  result(): Buffer {
    return this.buf.subarray(0, this.length);
  }

  octet(v: number): this {
    const at = this.room(1);
    this.buf[at] = v;
    return this;
  }
  // Each write reserves its room first: room() may replace the buffer.
  short(v: number): this {
    const at = this.room(2);
    this.buf.writeUInt16BE(v, at);
    return this;
  }
  long(v: number): this {
    const at = this.room(4);
    this.buf.writeUInt32BE(v, at);
    return this;
  }
  longlong(v: bigint | number): this {
    const at = this.room(8);
    this.buf.writeBigUInt64BE(BigInt(v), at);
    return this;
  }
  bytes(b: Buffer): this {
    const at = this.room(b.length);
    b.copy(this.buf, at);
    return this;
  }
  shortstr(s: string): this {
    const b = Buffer.from(s, 'utf8');
    if (b.length > 255) throw new RangeError(`short string over 255 bytes: ${s.slice(0, 40)}…`);
    return this.octet(b.length).bytes(b);
  }
  longstr(s: string | Buffer): this {
    const b = typeof s === 'string' ? Buffer.from(s, 'utf8') : s;
    return this.long(b.length).bytes(b);
  }
  bit(v: boolean): this {
    if (this.bitIndex >= 8) {
      this.bitAt = this.room(1);
      this.buf[this.bitAt] = 0;
      this.bitIndex = 0;
    }
    if (v) this.buf[this.bitAt]! |= 1 << this.bitIndex;
    this.bitIndex++;
    return this;
  }
  /** A length-prefixed block written by `body`. */
  private sized(body: (w: this) => void): this {
    const at = this.room(4);
    body(this);
    this.buf.writeUInt32BE(this.length - at - 4, at);
    return this;
  }
  table(t: FieldTable | undefined): this {
    return this.sized((w) => {
      for (const [name, v] of t ?? []) w.shortstr(name).fieldValue(v);
    });
  }
  fieldValue(v: FieldValue): this {
    this.octet(v.type.charCodeAt(0));
    /** Reserves `n` bytes, then writes into the (possibly new) buffer. */
    const put = (n: number, write: (buf: Buffer, at: number) => void) => {
      const at = this.room(n);
      write(this.buf, at);
      return this;
    };
    switch (v.type) {
      case 't':
        return this.octet(v.value ? 1 : 0);
      case 'b':
        return put(1, (b, at) => b.writeInt8(v.value, at));
      case 'B':
        return this.octet(v.value);
      case 's':
        return put(2, (b, at) => b.writeInt16BE(v.value, at));
      case 'u':
        return this.short(v.value);
      case 'I':
        return put(4, (b, at) => b.writeInt32BE(v.value, at));
      case 'i':
        return this.long(v.value);
      case 'l':
        return put(8, (b, at) => b.writeBigInt64BE(v.value, at));
      case 'T':
        return this.longlong(v.value);
      case 'f':
        return put(4, (b, at) => b.writeFloatBE(v.value, at));
      case 'd':
        return put(8, (b, at) => b.writeDoubleBE(v.value, at));
      case 'D':
        return this.octet(v.value.places).long(v.value.digits);
      case 'S':
      case 'x':
        return this.longstr(v.value);
      case 'A':
        return this.sized((w) => {
          for (const x of v.value) w.fieldValue(x);
        });
      case 'F':
        return this.table(v.value);
      case 'V':
        return this;
    }
  }
}

/** Field-value helpers for the arguments Redrive reads. */
export const field = {
  str: (s: string): FieldValue => ({ type: 'S', value: Buffer.from(s, 'utf8') }),
  bool: (v: boolean): FieldValue => ({ type: 't', value: v }),
  long: (n: number): FieldValue => ({ type: 'l', value: BigInt(n) }),
  table: (entries: Record<string, FieldValue> | FieldTable): FieldValue => ({
    type: 'F',
    value: entries instanceof Map ? entries : new Map(Object.entries(entries)),
  }),
  array: (items: FieldValue[]): FieldValue => ({ type: 'A', value: items }),
  timestamp: (seconds: number): FieldValue => ({ type: 'T', value: BigInt(seconds) }),
};

/** A string argument (longstr), or undefined if it is not one. */
export function strOf(v: FieldValue | undefined): string | undefined {
  return v && (v.type === 'S' || v.type === 'x') ? v.value.toString('utf8') : undefined;
}

/** A table as plain JSON values, for storing declared arguments and comparing them. */
function plainOf(v: FieldValue): unknown {
  switch (v.type) {
    case 'S':
    case 'x':
      return v.value.toString('utf8');
    case 'l':
    case 'T':
      return Number(v.value);
    case 'A':
      return v.value.map(plainOf);
    case 'F':
      return plainTable(v.value);
    default:
      return v.value;
  }
}

/** Null-prototype: the keys are the client's, and `__proto__` must stay an ordinary key. */
export function plainTable(t: FieldTable): Record<string, unknown> {
  const out: Record<string, unknown> = Object.create(null);
  for (const [k, v] of t) out[k] = plainOf(v);
  return out;
}

/**
 * What a content header costs once decoded, read from its bytes before it is decoded: the
 * field values its property tables hold, how deeply they nest, and an estimate of the
 * memory V8 needs for them. On the wire a void (`V`) is one byte; decoded it is an object
 * and an array slot, about 50 bytes, so a header's wire size understates what it holds
 * fiftyfold, and decoding a 128 KiB frame of voids takes tens of milliseconds. A header
 * over the caps is refused before it is decoded; one under them is counted at this cost
 * while its message is incomplete (publisher.ts).
 *
 * The constants were measured on Node 20 (a decoded `A` of `V`s, of empty `S`s, of empty
 * `F`s and of `A`s, and a table of `V`s): each estimate is at or above what the heap grew.
 */
const VALUE = 52; // { type, value } and the slot that holds it
const BUFFER_VIEW = 100; // a Buffer over the frame's bytes (the bytes are counted once, as the frame)
const ARRAY = 40;
const MAP = 190;
const MAP_ENTRY = 56; // and the key string's own bytes

/**
 * What one content header's tables may take decoded, beyond the frame's own bytes: about
 * 10,000 values, decoded in a few milliseconds (a 128 KiB frame of voids, 2.6 million).
 */
const MAX_HEADER_COST = 512 * 1024;
/** How deeply its tables and arrays may nest (RabbitMQ's x-death nests four deep). */
const MAX_HEADER_DEPTH = 32;

/** Bytes a value of each fixed-size type takes after its type letter (by its code); -1 for the others. */
const FIXED = new Int8Array(256).fill(-1);
for (const [type, size] of Object.entries({
  t: 1,
  b: 1,
  B: 1,
  s: 2,
  u: 2,
  I: 4,
  i: 4,
  f: 4,
  l: 8,
  T: 8,
  d: 8,
  D: 5,
  V: 0,
}))
  FIXED[type.charCodeAt(0)] = size;
const [S, X, A, F] = ['S', 'x', 'A', 'F'].map((c) => c.charCodeAt(0));

export type HeaderCost = { bytes: number } | { refused: string };

/**
 * The decoded cost of a basic content header's payload (class, weight, body size,
 * property flags and list): its `headers` table is the only property that can hold much.
 * Malformed bytes end the count; the decoder refuses them afterwards.
 */
export function contentHeaderCost(payload: Buffer): HeaderCost {
  let at = 12;
  if (payload.length < at + 2) return { bytes: payload.length };
  const flags = payload.readUInt16BE(at);
  for (let f = flags; f & 1 && at + 4 <= payload.length; at += 2) f = payload.readUInt16BE(at + 2);
  at += 2;
  if ((flags & 0x2000) === 0) return { bytes: payload.length };
  if (flags & 0x8000) at += 1 + (payload[at] ?? 0);
  if (flags & 0x4000) at += 1 + (payload[at] ?? 0);
  const scan = new Scan(payload);
  scan.table(at, 1);
  return scan.refused ? { refused: scan.refused } : { bytes: payload.length + scan.cost };
}

/** Walks field tables in place, adding up their decoded cost; stops at the caps. */
class Scan {
  cost = MAP;
  refused?: string;

  constructor(private readonly buf: Buffer) {}

  /** The entries of the table whose length is at `at`. */
  table(at: number, depth: number): void {
    const end = this.end(at);
    for (let p = at + 4; p < end && !this.refused; ) {
      const keyLength = this.buf[p]!;
      this.cost += MAP_ENTRY + keyLength;
      const next = this.value(p + 1 + keyLength, depth);
      if (next === undefined) return;
      p = next;
    }
  }

  /** The values of the array whose length is at `at`. */
  private array(at: number, depth: number): void {
    const end = this.end(at);
    for (let p = at + 4; p < end && !this.refused; ) {
      const next = this.value(p, depth);
      if (next === undefined) return;
      p = next;
    }
  }

  /** Where the table or array whose length is at `at` ends (nothing in it when malformed). */
  private end(at: number): number {
    return at + 4 > this.buf.length ? 0 : Math.min(this.buf.length, at + 4 + this.buf.readUInt32BE(at));
  }

  /** Counts the value at `at` (its type letter); where the next begins, undefined when malformed or refused. */
  private value(at: number, depth: number): number | undefined {
    if (at >= this.buf.length) return undefined;
    const type = this.buf[at]!;
    const fixed = FIXED[type]!;
    const nested = type === A || type === F;
    this.cost += VALUE + (type === S || type === X ? BUFFER_VIEW : type === A ? ARRAY : type === F ? MAP : 0);
    if (this.cost > MAX_HEADER_COST) {
      this.refused = `content header tables would take more than ${MAX_HEADER_COST} bytes decoded`;
      return undefined;
    }
    if (fixed >= 0) return at + 1 + fixed;
    if (at + 5 > this.buf.length || !(nested || type === S || type === X)) return undefined;
    if (nested && depth >= MAX_HEADER_DEPTH) {
      this.refused = `content header tables nested more than ${MAX_HEADER_DEPTH} deep`;
      return undefined;
    }
    if (type === A) this.array(at + 1, depth + 1);
    else if (type === F) this.table(at + 1, depth + 1);
    return at + 5 + this.buf.readUInt32BE(at + 1);
  }
}

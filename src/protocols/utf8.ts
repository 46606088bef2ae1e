/**
 * Request text exactly as sent. A lenient decoder turns bytes that are not UTF-8 into
 * U+FFFD, a valid character, so a body or attribute would be stored other than the client
 * sent it (and its MD5 would not match the client's). Here each such byte becomes a lone
 * low surrogate (U+DC80-U+DCFF, as Python's surrogateescape does): no valid input decodes
 * to one, and the engine refuses every text field that holds one (InvalidMessageContents
 * for a body, as SQS refuses characters outside its set).
 */
const fatal = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export function decodeUtf8(bytes: Uint8Array): string {
  try {
    return fatal.decode(bytes);
  } catch {
    return escapeInvalid(bytes);
  }
}

function escapeInvalid(b: Uint8Array): string {
  let out = '';
  let run = 0;
  let i = 0;
  while (i < b.length) {
    const n = sequenceLength(b, i);
    if (n > 0) {
      i += n;
      continue;
    }
    out += fatal.decode(b.subarray(run, i)) + String.fromCharCode(0xdc00 + b[i]!);
    run = ++i;
  }
  return out + fatal.decode(b.subarray(run));
}

/** The length of the well-formed UTF-8 sequence at `i` (RFC 3629), or 0. */
function sequenceLength(b: Uint8Array, i: number): number {
  const c = b[i]!;
  if (c < 0x80) return 1;
  let n: number;
  let lo = 0x80;
  let hi = 0xbf;
  if (c >= 0xc2 && c <= 0xdf) n = 2;
  else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    if (c === 0xe0) lo = 0xa0; // overlong
    if (c === 0xed) hi = 0x9f; // UTF-16 surrogates
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    if (c === 0xf0) lo = 0x90; // overlong
    if (c === 0xf4) hi = 0x8f; // above U+10FFFF
  } else return 0;
  if (i + n > b.length) return 0;
  const second = b[i + 1]!;
  if (second < lo || second > hi) return 0;
  for (let k = 2; k < n; k++) if ((b[i + k]! & 0xc0) !== 0x80) return 0;
  return n;
}

const PLUS = 0x2b;
const PERCENT = 0x25;

/**
 * `application/x-www-form-urlencoded` pairs as URLSearchParams reads them (`+` is a space,
 * a `%XX` that is not hex stays as it is), but percent-decoded to bytes first and then
 * decoded with decodeUtf8, so `%FF` is not silently replaced.
 */
export function parseForm(bytes: Uint8Array, each: (name: string, value: string) => void): void {
  let start = 0;
  while (start < bytes.length) {
    let end = bytes.indexOf(0x26, start);
    if (end < 0) end = bytes.length;
    if (end > start) {
      const pair = bytes.subarray(start, end);
      const eq = pair.indexOf(0x3d);
      each(formText(eq < 0 ? pair : pair.subarray(0, eq)), eq < 0 ? '' : formText(pair.subarray(eq + 1)));
    }
    start = end + 1;
  }
}

function formText(b: Uint8Array): string {
  if (b.indexOf(PERCENT) < 0 && b.indexOf(PLUS) < 0) return decodeUtf8(b);
  const out = new Uint8Array(b.length);
  let n = 0;
  for (let i = 0; i < b.length; i++) {
    const c = b[i]!;
    if (c === PLUS) out[n++] = 0x20;
    else if (c === PERCENT && i + 2 < b.length && isHex(b[i + 1]!) && isHex(b[i + 2]!)) {
      out[n++] = (hexValue(b[i + 1]!) << 4) | hexValue(b[i + 2]!);
      i += 2;
    } else out[n++] = c;
  }
  return decodeUtf8(out.subarray(0, n));
}

const isHex = (c: number) => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
const hexValue = (c: number) => (c <= 0x39 ? c - 0x30 : (c | 0x20) - 0x61 + 10);

/** node:http reads header values as latin1; this reads them as the UTF-8 the client sent. */
export function headerText(value: string): string {
  // eslint-disable-next-line no-control-regex
  return /^[\x00-\x7f]*$/.test(value) ? value : decodeUtf8(Buffer.from(value, 'latin1'));
}

import { hash } from 'node:crypto';
import type { MessageAttributeValue } from '../kernel/types.js';

// One-shot hash (Node >= 20.12): less than half the cost of createHash for a message body.
export function md5Hex(data: string | Buffer): string {
  return hash('md5', data, 'hex');
}

function lengthPrefixed(bytes: Buffer): Buffer[] {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(bytes.length);
  return [len, bytes];
}

/**
 * The digest SQS returns as MD5OfMessageAttributes (and MD5OfMessageSystemAttributes):
 * attributes sorted by name, each encoded as length-prefixed name, length-prefixed data
 * type, a transport byte (1 string, 2 binary) and the length-prefixed value.
 * Clients recompute it, so it must match to the bit.
 */
export function md5OfAttributes(attrs: Record<string, MessageAttributeValue> | undefined): string | undefined {
  if (!attrs) return undefined;
  const names = Object.keys(attrs).sort();
  if (names.length === 0) return undefined;
  const parts: Buffer[] = [];
  for (const name of names) {
    const a = attrs[name]!;
    parts.push(...lengthPrefixed(Buffer.from(name, 'utf8')));
    parts.push(...lengthPrefixed(Buffer.from(a.DataType, 'utf8')));
    if (a.BinaryValue !== undefined) {
      parts.push(Buffer.from([2]), ...lengthPrefixed(Buffer.from(a.BinaryValue, 'base64')));
    } else {
      parts.push(Buffer.from([1]), ...lengthPrefixed(Buffer.from(a.StringValue ?? '', 'utf8')));
    }
  }
  return md5Hex(Buffer.concat(parts));
}

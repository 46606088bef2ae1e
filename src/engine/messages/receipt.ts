import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { errors } from '../kernel/errors.js';
import type { QueueRecord } from '../kernel/types.js';

/**
 * A receipt handle names one receipt of one message: the queue, the message's store
 * position and a random token the store keeps for the current receipt. It is new on
 * every receive. A MAC under a server secret makes it unforgeable, so a genuine older
 * handle can still delete its message (as in SQS) while a made-up one cannot.
 */
export interface Receipt {
  queueId: number;
  seq: number;
  token: string;
}

// Tokens come from a pool of random bytes: one randomBytes call per receive per message
// was a measurable share of a receive.
let pool = Buffer.alloc(0);
let offset = 0;

export function newReceiptToken(): string {
  if (offset + 12 > pool.length) {
    pool = randomBytes(12 * 512);
    offset = 0;
  }
  offset += 12;
  return pool.toString('base64url', offset - 12, offset);
}

const BLOCK = 64;
const pads = new WeakMap<Buffer, { inner: Buffer; outer: Buffer }>();

/**
 * HMAC-SHA256 (RFC 2104) truncated to 128 bits, from two one-shot hashes with the padded
 * keys computed once per key: a third cheaper than createHmac, which costs an object and
 * a key schedule per call, and it runs twice per message (receive and delete).
 */
function mac(key: Buffer, body: string): Buffer {
  let p = pads.get(key);
  if (!p) {
    if (key.length > BLOCK) throw new Error('receipt key longer than a SHA-256 block');
    const inner = Buffer.alloc(BLOCK, 0x36);
    const outer = Buffer.alloc(BLOCK, 0x5c);
    for (let i = 0; i < key.length; i++) {
      inner[i]! ^= key[i]!;
      outer[i]! ^= key[i]!;
    }
    p = { inner, outer };
    pads.set(key, p);
  }
  const innerHash = hash('sha256', Buffer.concat([p.inner, Buffer.from(body, 'latin1')]), 'buffer');
  return hash('sha256', Buffer.concat([p.outer, innerHash]), 'buffer').subarray(0, 16);
}

export function encodeReceipt(r: Receipt, key: Buffer): string {
  const body = `rd1|${r.queueId}|${r.seq}|${r.token}`;
  return Buffer.from(`${body}|${mac(key, body).toString('base64url')}`).toString('base64');
}

export function decodeReceipt(handle: unknown, key: Buffer): Receipt {
  if (typeof handle !== 'string' || handle.length === 0) {
    if (handle === undefined || handle === null || handle === '') throw errors.missingParameter('ReceiptHandle');
    throw errors.receiptHandleIsInvalid(String(handle));
  }
  const text = Buffer.from(handle, 'base64').toString('latin1');
  const parts = text.split('|');
  if (
    parts.length !== 5 ||
    parts[0] !== 'rd1' ||
    !/^\d+$/.test(parts[1]!) ||
    !/^\d+$/.test(parts[2]!) ||
    !/^[A-Za-z0-9_-]{16}$/.test(parts[3]!)
  ) {
    throw errors.receiptHandleIsInvalid(handle);
  }
  const given = Buffer.from(parts[4]!, 'base64url');
  const expected = mac(key, parts.slice(0, 4).join('|'));
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    throw errors.receiptHandleIsInvalid(handle);
  return { queueId: Number(parts[1]), seq: Number(parts[2]), token: parts[3]! };
}

/** Seals and opens receipt handles under the store's shared key (engine.ts makes it). */
export interface ReceiptCodec {
  seal(r: Receipt): string;
  open(queue: Pick<QueueRecord, 'id'>, handle: unknown): Receipt;
}

import { randomBytes } from 'node:crypto';
import { errors } from './errors.js';

/**
 * A receipt handle names one receipt of one message: the queue, the message's store
 * position and a random token the store keeps for the current receipt. It is new on
 * every receive, and cannot be forged into another message's handle.
 */
export interface Receipt {
  queueId: number;
  seq: number;
  token: string;
}

export function newReceiptToken(): string {
  return randomBytes(12).toString('base64url');
}

export function encodeReceipt(r: Receipt): string {
  return Buffer.from(`rd1|${r.queueId}|${r.seq}|${r.token}`).toString('base64');
}

export function decodeReceipt(handle: unknown): Receipt {
  if (handle === undefined || handle === null || handle === '') throw errors.missingParameter('ReceiptHandle');
  if (typeof handle !== 'string') throw errors.receiptHandleIsInvalid(String(handle));
  const parts = Buffer.from(handle, 'base64').toString('latin1').split('|');
  if (parts.length !== 4 || parts[0] !== 'rd1' || !/^\d+$/.test(parts[1]!) || !/^\d+$/.test(parts[2]!) || !/^[A-Za-z0-9_-]{16}$/.test(parts[3]!)) {
    throw errors.receiptHandleIsInvalid(handle);
  }
  return { queueId: Number(parts[1]), seq: Number(parts[2]), token: parts[3]! };
}

import { md5OfAttributes } from './md5.js';
import type { MessageAttributes, StoredMessage } from '../kernel/types.js';

const SYSTEM_NAMES = [
  'SenderId',
  'SentTimestamp',
  'ApproximateReceiveCount',
  'ApproximateFirstReceiveTimestamp',
  'SequenceNumber',
  'MessageDeduplicationId',
  'MessageGroupId',
  'AWSTraceHeader',
  'DeadLetterQueueSourceArn',
] as const;

/** The system attributes a receive asked for (AttributeNames or MessageSystemAttributeNames). */
export function systemAttributes(m: StoredMessage, wanted: Set<string>): Record<string, string> | undefined {
  if (wanted.size === 0) return undefined;
  const all = wanted.has('All');
  const values: Record<string, string | undefined> = {
    SenderId: m.senderId,
    SentTimestamp: String(m.sentAt),
    ApproximateReceiveCount: String(m.receiveCount),
    ApproximateFirstReceiveTimestamp: m.firstReceivedAt === null ? undefined : String(m.firstReceivedAt),
    // Only FIFO messages carry a deduplication id (standard queues reject one).
    SequenceNumber: m.dedupId !== undefined ? sequenceNumber(m.seq) : undefined,
    MessageDeduplicationId: m.dedupId,
    MessageGroupId: m.groupId,
    AWSTraceHeader: m.systemAttributes?.AWSTraceHeader?.StringValue,
    DeadLetterQueueSourceArn: m.deadLetterSourceArn,
  };
  const out: Record<string, string> = {};
  for (const name of SYSTEM_NAMES) {
    const v = values[name];
    if (v !== undefined && (all || wanted.has(name))) out[name] = v;
  }
  return Object.keys(out).length ? out : undefined;
}

/** SQS sequence numbers are 20-digit decimal strings. */
export function sequenceNumber(seq: number): string {
  return String(seq).padStart(20, '0');
}

/**
 * The user attributes a receive asked for: `All`, `.*`, `*`, exact names, or
 * `prefix.*`. The MD5 is over the returned subset, as SQS computes it.
 */
export function selectMessageAttributes(
  attrs: MessageAttributes | undefined,
  wanted: string[],
): { attributes?: MessageAttributes; md5?: string } {
  if (!attrs || wanted.length === 0) return {};
  const all = wanted.some((w) => w === 'All' || w === '.*' || w === '*');
  const prefixes = wanted.filter((w) => w.endsWith('.*') && w.length > 2).map((w) => w.slice(0, -2));
  // fromEntries keeps a name such as `__proto__` an ordinary key.
  const out: MessageAttributes = Object.fromEntries(
    Object.entries(attrs).filter(([name]) => all || wanted.includes(name) || prefixes.some((p) => name.startsWith(p))),
  );
  if (Object.keys(out).length === 0) return {};
  return { attributes: out, md5: md5OfAttributes(out) };
}

import { createHash } from 'node:crypto';
import { errors } from '../kernel/errors.js';
import type { NewMessage, QueueRecord } from '../kernel/types.js';

/** SQS's deduplication interval. */
export const DEDUP_INTERVAL_MS = 5 * 60_000;
/**
 * In-flight messages a FIFO queue allows; past it receives get nothing, and no error.
 * 120,000 since November 2024, as for standard queues (it was 20,000).
 */
export const FIFO_INFLIGHT_LIMIT = 120_000;

// Alphanumeric and punctuation (!"#$%&'()*+,-./:;<=>?@[\]^_`{|}~), 1 to 128 characters.
const ID = /^[A-Za-z0-9!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]{1,128}$/;

function checkId(
  value: unknown,
  name: 'MessageGroupId' | 'MessageDeduplicationId' | 'ReceiveRequestAttemptId',
): string {
  if (typeof value !== 'string' || !ID.test(value)) {
    throw errors.invalidValue(
      name,
      value,
      `${name} can only include alphanumeric and punctuation characters. 1 to 128 in length.`,
    );
  }
  return value;
}

const notForThisQueueType = (name: string, value: unknown) =>
  errors.invalidValue(name, value, 'The request include parameter that is not valid for this queue type.');

type Entry = Record<string, unknown>;

/**
 * Checks the FIFO-specific parameters of a send. In a batch these failures reject the
 * whole request (as SQS does), so a batch checks every entry before sending any.
 */
export function checkFifoParameters(queue: QueueRecord, e: Entry, batch: boolean): void {
  const given = (v: unknown) => v !== undefined && v !== null;
  if (!queue.fifo) {
    if (given(e.MessageDeduplicationId)) throw notForThisQueueType('MessageDeduplicationId', e.MessageDeduplicationId);
    // Standard queues accept a group id (SQS fair queues); it orders nothing.
    if (given(e.MessageGroupId)) checkId(e.MessageGroupId, 'MessageGroupId');
    return;
  }
  if (!given(e.MessageGroupId)) {
    const msg = 'The request must contain the parameter MessageGroupId.';
    throw batch ? errors.invalidParameterValue(msg) : errors.missingParameter('MessageGroupId');
  }
  checkId(e.MessageGroupId, 'MessageGroupId');
  if (given(e.MessageDeduplicationId)) checkId(e.MessageDeduplicationId, 'MessageDeduplicationId');
  else if (queue.attributes.ContentBasedDeduplication !== 'true') {
    throw errors.invalidParameterValue(
      'The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly',
    );
  }
  if (given(e.DelaySeconds) && e.DelaySeconds !== 0) throw notForThisQueueType('DelaySeconds', e.DelaySeconds);
}

/** The ordering and deduplication fields of a message to send (after checkFifoParameters). */
export function fifoFields(queue: QueueRecord, e: Entry, body: string, now: number): Partial<NewMessage> {
  const groupId = typeof e.MessageGroupId === 'string' ? e.MessageGroupId : undefined;
  if (!queue.fifo) return { groupId };
  const dedupId =
    typeof e.MessageDeduplicationId === 'string'
      ? e.MessageDeduplicationId
      : createHash('sha256').update(body, 'utf8').digest('hex');
  // An id is remembered in the queue's current scope, and looked up in both: a change of
  // DeduplicationScope does not forget what was deduplicated under the other one.
  const perGroup =
    queue.attributes.DeduplicationScope === 'messageGroup' && queue.attributes[DEDUP_QUEUE_WIDE] !== 'true';
  const [dedupScope, dedupOtherScope] = perGroup ? [`group:${groupId}`, 'queue'] : ['queue', `group:${groupId}`];
  return { groupId, dedupId, dedupScope, dedupOtherScope, dedupUntil: now + DEDUP_INTERVAL_MS };
}

export function receiveAttemptId(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  return checkId(value, 'ReceiveRequestAttemptId');
}

/**
 * Stored (never shown) on a FIFO queue that deduplicated queue-wide before it was switched
 * to DeduplicationScope messageGroup: SQS keeps deduplicating such a queue across groups
 * (an id sent in one group, deleted, then sent in another within 5 minutes is still a
 * duplicate), so Redrive does too. Only a queue created with messageGroup deduplicates
 * per group.
 */
export const DEDUP_QUEUE_WIDE = '__dedupQueueWide';

/** What SetQueueAttributes also stores when it changes the deduplication scope (see DEDUP_QUEUE_WIDE). */
export function dedupScopeChange(queue: QueueRecord, attributes: Record<string, string>): Record<string, string> {
  const wasQueueWide = (queue.attributes.DeduplicationScope ?? 'queue') === 'queue';
  return queue.fifo && wasQueueWide && attributes.DeduplicationScope === 'messageGroup'
    ? { [DEDUP_QUEUE_WIDE]: 'true' }
    : {};
}

/** SQS allows perMessageGroupId throughput only with messageGroup deduplication. */
export function checkFifoAttributes(attributes: Record<string, string>): void {
  if (attributes.FifoThroughputLimit === 'perMessageGroupId' && attributes.DeduplicationScope !== 'messageGroup') {
    throw errors.invalidAttributeValue(
      'Invalid value for the parameter FifoThroughputLimit. Reason: The perMessageGroupId value is allowed only when the value for DeduplicationScope is messageGroup.',
    );
  }
}

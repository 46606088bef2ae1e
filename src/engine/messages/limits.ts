import type { EngineContext } from '../context/engine-context.js';
import { expiryAfter, MESSAGE_TTL_ATTRIBUTE } from '../policies/dead-letter-settings.js';
import { errors, sqsError, type SqsError } from '../kernel/errors.js';
import type { NewQueue } from '../store/queues.js';
import type { MessageAttributes, QueueRecord } from '../kernel/types.js';

/**
 * A queue's limits on what it holds: how long a message may stay (TTL: the queue's
 * setting and a send's own) and how many messages and bytes it holds. What passes a
 * limit is dead-lettered (dead-letters/road.ts).
 */

/** When a message arriving now in `queue` expires under the queue's TTL, if it has one. */
export function queueExpiry(engine: EngineContext, queue: QueueRecord | NewQueue, now: number): number | undefined {
  return expiryAfter(engine.settingsOf(queue), now);
}

/** The send's own TTL (system attribute RedriveTtlSeconds): whole seconds, up to 14 days. */
function sendTtl(system: MessageAttributes | undefined): number | undefined {
  const a = system?.[MESSAGE_TTL_ATTRIBUTE];
  if (!a) return undefined;
  const v = a.StringValue ?? '';
  if (!a.DataType.startsWith('Number') || !/^\d+$/.test(v) || Number(v) > 1_209_600) {
    throw errors.invalidParameterValue(
      `Message system attribute ${MESSAGE_TTL_ATTRIBUTE} must be a Number from 0 to 1209600 (seconds).`,
    );
  }
  return Number(v);
}

/** When a message sent now expires. As in RabbitMQ, with a queue and a message TTL the lower applies. */
export function sendExpiry(
  engine: EngineContext,
  queue: QueueRecord,
  system: MessageAttributes | undefined,
  now: number,
): number | undefined {
  const a = engine.settingsOf(queue).messageTtlSeconds;
  const b = sendTtl(system);
  const ttl = a === undefined ? b : b === undefined ? a : Math.min(a, b);
  return ttl === undefined ? undefined : now + ttl * 1000;
}

/** The error of a send refused by the queue's length limit. */
export function queueFull(queue: QueueRecord): SqsError {
  return sqsError(
    'OverLimit',
    `Queue ${queue.name} is full: it has reached its length limit, and the send was rejected (RedriveOverflow).`,
  );
}

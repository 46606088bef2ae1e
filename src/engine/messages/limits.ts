import type { EngineContext } from '../context.js';
import { deadLetterTarget } from '../dead-letters/dead-letter.js';
import { expiryAfter, MESSAGE_TTL_ATTRIBUTE, type DeadLetterSettings } from '../dead-letters/dead-letter-settings.js';
import { errors, sqsError, type SqsError } from '../errors.js';
import type { LengthLimit } from '../store/dead-letters.js';
import type { NewQueue } from '../store/queues.js';
import type { MessageAttributes, QueueRecord } from '../types.js';

/**
 * A queue's limits on what it holds: how long a message may stay (TTL: the queue's
 * setting and a send's own) and how many messages and bytes it holds. What passes a
 * limit is dead-lettered (dead-letters/dead-letter.ts).
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

/**
 * The queue's length limit with where drop-head sends what it pushes out, if it has one;
 * undefined at once for a queue without one (most), so a send need not wait for nothing.
 */
export function lengthLimit(engine: EngineContext, queue: QueueRecord): Promise<LengthLimit> | undefined {
  const s = engine.settingsOf(queue);
  if (s.maxLength === undefined && s.maxLengthBytes === undefined) return undefined;
  return limitOf(engine, queue, s);
}

async function limitOf(engine: EngineContext, queue: QueueRecord, s: DeadLetterSettings): Promise<LengthLimit> {
  const deadLetter = s.overflow === 'drop-head' ? await deadLetterTarget(engine, queue, 'maxlen') : undefined;
  // reject-publish-dlx refuses as reject-publish does; the AMQP publish dead-letters what was refused.
  return {
    maxMessages: s.maxLength,
    maxBytes: s.maxLengthBytes,
    overflow: s.overflow === 'drop-head' ? 'drop-head' : 'reject-publish',
    deadLetter,
  };
}

/** The error of a send refused by the queue's length limit. */
export function queueFull(queue: QueueRecord): SqsError {
  return sqsError(
    'OverLimit',
    `Queue ${queue.name} is full: it has reached its length limit, and the send was rejected (RedriveOverflow).`,
  );
}

import { parseQueueArn } from '../queues/addressing.js';
import type { EngineContext } from '../context.js';
import { closesCycle, recordDeath } from './deaths.js';
import { MESSAGE_TTL_ATTRIBUTE } from './dead-letter-settings.js';
import type { DeadLetterArrival, DeadLetterRule, DeadLetterTarget, LengthLimit } from '../store/dead-letters.js';
import type { NewQueue } from '../store/queues.js';
import { errors, sqsError, type SqsError } from '../errors.js';
import { defaultAttributes } from '../queues/queue-attributes.js';
import type { DeathReason, MessageAttributes, QueueRecord, StoredMessage } from '../types.js';

/** Where messages go whose dead-lettering would close a cycle with no rejection in it. */
export const CYCLES_QUEUE = 'redrive-cycles';
export const cyclesQueueName = (fifo: boolean) => (fifo ? `${CYCLES_QUEUE}.fifo` : CYCLES_QUEUE);

/** The queue that `queue` dead-letters into, if it has one that exists and fits. */
async function targetQueue(engine: EngineContext, queue: QueueRecord): Promise<QueueRecord | undefined> {
  const arn = engine.settingsOf(queue).targetArn;
  const addr = arn && parseQueueArn(arn);
  // A dead-letter queue is in the same account and region as its source, as in SQS: a
  // server policy's target ARN serves the queues of its own account only.
  if (!addr || addr.region !== queue.region || addr.accountId !== queue.accountId) return undefined;
  const dlq = await engine.store.queues.get(addr);
  // A deleted target stops dead-lettering, so nothing is lost (docs/dead-letter-queues.md);
  // a policy that names a queue of the other type is ignored likewise. A queue may be its
  // own dead-letter queue only by its own RedrivePolicy (as SQS allows), never because a
  // server policy's target happens to be the queue itself.
  if (!dlq || dlq.fifo !== queue.fifo) return undefined;
  if (dlq.id === queue.id && !queue.attributes.RedrivePolicy) return undefined;
  return dlq;
}

/**
 * The parking queue for broken cycles: the queue itself if it exists, else how to create
 * it, which the store does in the transaction of the first message parked there. It is
 * only needed when the target can itself dead-letter onwards: a target that cannot is
 * where any loop ends.
 */
async function cyclesQueue(engine: EngineContext, dlq: QueueRecord): Promise<NewQueue | undefined> {
  if (!engine.settingsOf(dlq).targetArn) return undefined;
  const name = cyclesQueueName(dlq.fifo);
  const existing = await engine.store.queues.get({ accountId: dlq.accountId, region: dlq.region, name });
  if (existing) return existing;
  const now = engine.clock.now();
  return {
    accountId: dlq.accountId, region: dlq.region, name, fifo: dlq.fifo,
    attributes: { ...defaultAttributes(dlq.fifo), MessageRetentionPeriod: '1209600' },
    tags: {}, createdAt: now, modifiedAt: now, lastPurgeAt: null,
  };
}

/** The message's own TTL (send attribute), which applies only until its first death. */
export function messageTtlSeconds(m: Pick<StoredMessage, 'systemAttributes' | 'deaths'>): number | undefined {
  const v = m.systemAttributes?.[MESSAGE_TTL_ATTRIBUTE]?.StringValue;
  return v === undefined || m.deaths?.length ? undefined : Number(v);
}

/** When a message arriving now in `queue` expires under the queue's TTL, if it has one. */
export function queueExpiry(engine: EngineContext, queue: QueueRecord | NewQueue, now: number): number | undefined {
  const ttl = engine.settingsOf(queue).messageTtlSeconds;
  return ttl === undefined ? undefined : now + ttl * 1000;
}

/**
 * How messages of `queue` are dead-lettered for `reason`, or undefined when the queue has
 * no usable dead-letter queue. The arrival records the death in the message's history,
 * removes its TTL (the target's own TTL applies from arrival), and breaks cycles. It is
 * pure: the engine logs what was parked once the store's operation has committed.
 */
export async function deadLetterTarget(
  engine: EngineContext, queue: QueueRecord, reason: DeathReason, rejectReason?: string,
): Promise<DeadLetterTarget | undefined> {
  // An AMQP dead-letter exchange, when the queue has one, replaces its target queue.
  if (engine.settingsOf(queue).deadLetterExchange !== undefined) return engine.exchangeDeadLetterTarget(queue, reason);
  const dlq = await targetQueue(engine, queue);
  if (!dlq) return undefined;
  const parking = await cyclesQueue(engine, dlq);
  const sourceArn = engine.arnOf(queue);
  const dlqArn = engine.arnOf(dlq);
  // A queue that is its own dead-letter queue (SQS allows it): the message re-enters the
  // queue once, with its receive count started again, or its next receive would move it
  // again at once. Only an earlier death there makes a cycle, not the one being recorded.
  const self = dlq.id === queue.id;
  return {
    queueId: dlq.id,
    reason,
    cyclesQueue: parking,
    arrival: (m): DeadLetterArrival => {
      const now = engine.clock.now();
      const deaths = recordDeath(m.deaths, {
        queue: queue.name, queueArn: sourceArn, reason, time: now, rejectReason, originalTtlSeconds: messageTtlSeconds(m),
      });
      const parked = parking !== undefined && closesCycle(self ? m.deaths ?? [] : deaths, dlqArn);
      const dest = parked ? parking : dlq;
      return {
        // Standard queues keep the original enqueue time; FIFO queues reset it and
        // replace the deduplication id with the message id.
        sentAt: queue.fifo ? now : m.sentAt,
        dedupId: queue.fifo ? m.messageId : m.dedupId,
        deadLetterSourceArn: sourceArn,
        deaths,
        expiresAt: queueExpiry(engine, dest, now),
        receiveCount: self && !parked ? 0 : undefined,
        parked,
      };
    },
  };
}

/** How the receive path dead-letters messages received more than maxReceiveCount times. */
export async function deadLetterRule(engine: EngineContext, queue: QueueRecord): Promise<DeadLetterRule | undefined> {
  const max = engine.settingsOf(queue).maxReceiveCount;
  if (max === undefined) return undefined;
  const target = await deadLetterTarget(engine, queue, 'delivery_limit');
  return target && { ...target, maxReceiveCount: max };
}

/** The send's own TTL (system attribute RedriveTtlSeconds): whole seconds, up to 14 days. */
function sendTtl(system: MessageAttributes | undefined): number | undefined {
  const a = system?.[MESSAGE_TTL_ATTRIBUTE];
  if (!a) return undefined;
  const v = a.StringValue ?? '';
  if (!a.DataType.startsWith('Number') || !/^\d+$/.test(v) || Number(v) > 1_209_600) {
    throw errors.invalidParameterValue(`Message system attribute ${MESSAGE_TTL_ATTRIBUTE} must be a Number from 0 to 1209600 (seconds).`);
  }
  return Number(v);
}

/** When a message sent now expires. As in RabbitMQ, with a queue and a message TTL the lower applies. */
export function sendExpiry(engine: EngineContext, queue: QueueRecord, system: MessageAttributes | undefined, now: number): number | undefined {
  const a = engine.settingsOf(queue).messageTtlSeconds;
  const b = sendTtl(system);
  const ttl = a === undefined ? b : b === undefined ? a : Math.min(a, b);
  return ttl === undefined ? undefined : now + ttl * 1000;
}

/** The queue's length limit with where drop-head sends what it pushes out, if it has one. */
export async function lengthLimit(engine: EngineContext, queue: QueueRecord): Promise<LengthLimit | undefined> {
  const s = engine.settingsOf(queue);
  if (s.maxLength === undefined && s.maxLengthBytes === undefined) return undefined;
  const deadLetter = s.overflow === 'drop-head' ? await deadLetterTarget(engine, queue, 'maxlen') : undefined;
  // reject-publish-dlx refuses as reject-publish does; the AMQP publish dead-letters what was refused.
  return { maxMessages: s.maxLength, maxBytes: s.maxLengthBytes, overflow: s.overflow === 'drop-head' ? 'drop-head' : 'reject-publish', deadLetter };
}

/** The error of a send refused by the queue's length limit. */
export function queueFull(queue: QueueRecord): SqsError {
  return sqsError('OverLimit', `Queue ${queue.name} is full: it has reached its length limit, and the send was rejected (RedriveOverflow).`);
}

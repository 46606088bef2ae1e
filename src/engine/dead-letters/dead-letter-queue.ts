import { parseQueueArn, queueArn } from '../kernel/addressing.js';
import type { EngineContext } from '../context/engine-context.js';
import { closesCycle, originalTtlSeconds, recordDeath } from './deaths.js';
import { expiryAfter, type DeadLetterSettings } from '../policies/dead-letter-settings.js';
import type { DeadLetterMove, DeadLetterTarget } from '../store/dead-letters.js';
import { newQueue, type NewQueue } from '../store/queues.js';
import { defaultAttributes } from '../queues/queue-attributes.js';
import type { DeathReason, QueueRecord } from '../kernel/types.js';

/** Where messages go whose dead-lettering would close a cycle with no rejection in it. */
const CYCLES_QUEUE = 'redrive-cycles';
export const cyclesQueueName = (fifo: boolean) => (fifo ? `${CYCLES_QUEUE}.fifo` : CYCLES_QUEUE);

/** The queue that `queue` dead-letters into, if it has one that exists and fits. */
async function targetQueue(
  engine: EngineContext,
  queue: QueueRecord,
  settings: DeadLetterSettings,
): Promise<QueueRecord | undefined> {
  const arn = settings.targetArn;
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
async function cyclesQueue(
  engine: EngineContext,
  dlq: QueueRecord,
  dlqSettings: DeadLetterSettings,
): Promise<NewQueue | undefined> {
  if (!dlqSettings.targetArn) return undefined;
  const name = cyclesQueueName(dlq.fifo);
  const existing = await engine.store.queues.get({ accountId: dlq.accountId, region: dlq.region, name });
  if (existing) return existing;
  const now = engine.clock.now();
  return newQueue(
    {
      accountId: dlq.accountId,
      region: dlq.region,
      name,
      fifo: dlq.fifo,
      attributes: { ...defaultAttributes(dlq.fifo), MessageRetentionPeriod: '1209600' },
    },
    now,
  );
}

/**
 * How messages of `queue` move into its dead-letter queue for `reason`, or undefined
 * when it has none that exists and fits. The arrival records the death in the message's
 * history, replaces its TTL with the destination's, and sends a message that would close
 * a cycle to the cycles queue instead.
 */
export async function queueTarget(
  engine: EngineContext,
  queue: QueueRecord,
  settings: DeadLetterSettings,
  reason: DeathReason,
  rejectReason?: string,
): Promise<DeadLetterTarget | undefined> {
  const dlq = await targetQueue(engine, queue, settings);
  if (!dlq) return undefined;
  const dlqSettings = engine.settingsOf(dlq);
  const parking = await cyclesQueue(engine, dlq, dlqSettings);
  const parkingSettings = parking && engine.settingsOf(parking);
  const sourceArn = queueArn(queue.region, queue.accountId, queue.name);
  const dlqArn = queueArn(dlq.region, dlq.accountId, dlq.name);
  // A queue that is its own dead-letter queue (SQS allows it): the message re-enters the
  // queue once, with its receive count started again, or its next receive would move it
  // again at once. Only an earlier death there makes a cycle, not the one being recorded.
  const self = dlq.id === queue.id;
  return {
    queueId: dlq.id,
    reason,
    cyclesQueue: parking,
    arrival: (m): DeadLetterMove => {
      const now = engine.clock.now();
      const deaths = recordDeath(m.deaths, {
        queue: queue.name,
        queueArn: sourceArn,
        reason,
        time: now,
        rejectReason,
        originalTtlSeconds: originalTtlSeconds(m),
      });
      const cycle = parking !== undefined && closesCycle(self ? (m.deaths ?? []) : deaths, dlqArn);
      return {
        kind: cycle ? 'cycle' : 'move',
        // Standard queues keep the original enqueue time; FIFO queues reset it and
        // replace the deduplication id with the message id.
        sentAt: queue.fifo ? now : m.sentAt,
        dedupId: queue.fifo ? m.messageId : m.dedupId,
        deadLetterSourceArn: sourceArn,
        deaths,
        expiresAt: expiryAfter(cycle ? parkingSettings! : dlqSettings, now),
        receiveCount: self && !cycle ? 0 : undefined,
      };
    },
  };
}

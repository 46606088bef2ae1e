import type { Clock } from '../kernel/clock.js';
import type { FAIR_QUEUE_ATTRIBUTES } from '../queues/queue-attributes.js';
import type { GroupInflight } from '../store/messages.js';
import type { NoisyGroups } from '../store/standard-plan.js';
import type { Store } from '../store/store.js';
import type { QueueRecord, StoredMessage } from '../kernel/types.js';

/**
 * Fair queues (docs/fair-queues.md). On a standard queue whose messages carry a
 * MessageGroupId, a group is noisy when it holds more than NOISY_SHARE of the queue's
 * messages in flight and at least NOISY_MIN_INFLIGHT of its own: the concurrency-share
 * rule SQS documents. A receive then takes quiet groups' messages first (standard-plan.ts).
 * A message without a group id is a tenant of its own and is never noisy.
 */
const NOISY_SHARE = 0.1;
export const NOISY_MIN_INFLIGHT = 30;
/**
 * How long a judgement holds. Counting in flight by group reads the queue's hidden range,
 * so it is done at most this often per queue, never on each receive.
 */
export const FAIR_REFRESH_MS = 200;

/**
 * SQS keeps favouring the quiet groups until a noisy group's share is back to a level
 * comparable with theirs. In-flight counts swing with the consumers' rhythm (a wave of
 * deletes empties them for a moment), so a group stays noisy until it has not been
 * detected for this long: released at the first dip, it would take whole receive windows
 * of its backlog at once.
 */
export const NOISY_HOLD_MS = 2_000;

/**
 * The noisy groups among these in-flight figures, each with its messages in flight.
 * `detectedAt` (group → when last detected) is updated in place.
 */
export function judgeNoisy(
  inflight: GroupInflight,
  now: number,
  detectedAt: Map<string, number> = new Map(),
): Map<string, number> {
  for (const [group, n] of inflight.groups) {
    if (n >= NOISY_MIN_INFLIGHT && n > NOISY_SHARE * inflight.total) detectedAt.set(group, now);
  }
  const noisy = new Map<string, number>();
  for (const [group, at] of detectedAt) {
    if (now - at < NOISY_HOLD_MS) noisy.set(group, inflight.groups.get(group) ?? 0);
    else detectedAt.delete(group);
  }
  return noisy;
}

/** Per queue, the noisy groups as last judged; queues without group ids cost nothing. */
export class FairQueues {
  /** Standard queues whose receives have returned a message with a group id. */
  private readonly grouped = new Set<number>();
  private readonly judged = new Map<
    number,
    { at: number; noisy: Map<string, number>; detectedAt: Map<string, number> }
  >();

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    readonly enabled: boolean,
  ) {}

  /** Learns from a receive's messages whether the queue is a multi-tenant one. */
  noteReceived(queue: QueueRecord, messages: readonly StoredMessage[]): void {
    if (!this.enabled || queue.fifo || this.grouped.has(queue.id)) return;
    if (messages.some((m) => m.groupId !== undefined)) this.grouped.add(queue.id);
  }

  /** The queue's noisy groups now, or undefined when there are none (the receive is unchanged). */
  async noisy(queue: QueueRecord, now = this.clock.now()): Promise<NoisyGroups | undefined> {
    if (!this.enabled || queue.fifo || !this.grouped.has(queue.id)) return undefined;
    let j = this.judged.get(queue.id);
    if (!j || now - j.at >= FAIR_REFRESH_MS || now < j.at) {
      const detectedAt = j?.detectedAt ?? new Map<string, number>();
      j = {
        at: now,
        noisy: judgeNoisy(await this.store.messages.inflightByGroup(queue.id, now), now, detectedAt),
        detectedAt,
      };
      this.judged.set(queue.id, j);
    }
    return j.noisy.size ? j.noisy : undefined;
  }

  /** The noisy groups for GetQueueAttributes: judged afresh, whether or not a receive has run. */
  async noisyNow(queue: QueueRecord, now: number): Promise<NoisyGroups> {
    if (queue.fifo) return new Map();
    return judgeNoisy(
      await this.store.messages.inflightByGroup(queue.id, now),
      now,
      new Map(this.judged.get(queue.id)?.detectedAt),
    );
  }

  /** The fair-queue figures under their CloudWatch names (FAIR_QUEUE_ATTRIBUTES). */
  async attributes(queue: QueueRecord, now: number): Promise<Record<(typeof FAIR_QUEUE_ATTRIBUTES)[number], string>> {
    const noisy = await this.noisyNow(queue, now);
    const quiet = await this.store.messages.quietDepth(queue.id, [...noisy.keys()], now);
    return {
      ApproximateNumberOfNoisyGroups: String(noisy.size),
      ApproximateNumberOfMessagesVisibleInQuietGroups: String(quiet.visible),
      ApproximateNumberOfMessagesNotVisibleInQuietGroups: String(quiet.inflight),
      ApproximateNumberOfMessagesDelayedInQuietGroups: String(quiet.delayed),
      ApproximateAgeOfOldestMessageInQuietGroups: String(
        quiet.oldestSentAt === undefined ? 0 : Math.max(0, Math.floor((now - quiet.oldestSentAt) / 1000)),
      ),
    };
  }

  forget(queueId: number): void {
    this.grouped.delete(queueId);
    this.judged.delete(queueId);
  }
}

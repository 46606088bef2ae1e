import { randomUUID } from 'node:crypto';
import type { MoveBatch, MoveTaskRecord } from '../store/store.js';
import type { Destination } from '../store/move-tasks.js';
import type { EngineObserver } from '../context/observer.js';
import { parseQueueArn, type QueueAddress } from '../kernel/addressing.js';
import type { Timer } from '../kernel/clock.js';
import type { EngineContext } from '../context/engine-context.js';
import { filterPredicate, type MoveFilter } from './move-filter.js';
import { queueExpiry } from '../messages/limits.js';
import { queueNumber, retentionMs } from '../queues/queue-attributes.js';
import { messageSize } from '../queues/validation.js';
import type { NewMessage, QueueRecord, StoredMessage } from '../kernel/types.js';

/** A node holds a task for this long without renewing; another node then takes it over. */
const LEASE_MS = 15_000;
const POLL_MS = 1_000;
const RETRY_MS = 1_000;
/** Messages per batch without a rate limit; each batch is one transaction. */
const FAST_BATCH = 100;
/** A filtered batch examines up to ten times its limit, and bodies of at most this many characters (move-plan.ts). */
const FILTER_SCAN_BYTES = 4 * 1024 * 1024;
/** With a rate limit, batches of up to this many, spaced to keep the rate. */
const RATE_BATCH = 10;
/** After a stall, a rate-limited task catches up by at most this much time. */
const MAX_BURST_MS = 1_000;
const NON_EXISTENT_QUEUE = 'AWS.SimpleQueueService.NonExistentQueue';

/** The rules of one task: which messages move, where, and what they look like there. */
export interface MoveRules {
  matches(m: StoredMessage, now: number): boolean;
  destination(m: StoredMessage): QueueAddress | undefined;
  rewrite(m: StoredMessage, now: number, destination: QueueRecord): NewMessage;
}

/**
 * `expiryOf` gives a redriven message the destination's own TTL, if it has one; its
 * dead-letter history goes with it, so a message that failed three times shows it.
 */
export function moveRules(
  source: QueueRecord,
  task: { destinationArn?: string; filter?: MoveFilter },
  expiryOf: (destination: QueueRecord, now: number) => number | undefined = () => undefined,
): MoveRules {
  const fixed = task.destinationArn === undefined ? undefined : parseQueueArn(task.destinationArn);
  const filter = filterPredicate(task.filter);
  const retention = retentionMs(source);
  return {
    // Without a destination a message returns to the queue it died in; one sent straight
    // to the dead-letter queue has none, so it stays. Expired or in-flight ones stay too.
    matches: (m, now) =>
      m.visibleAt <= now &&
      m.sentAt >= now - retention &&
      (fixed !== undefined || m.deadLetterSourceArn !== undefined) &&
      filter(m),
    destination: (m) =>
      fixed ?? (m.deadLetterSourceArn === undefined ? undefined : parseQueueArn(m.deadLetterSourceArn)),
    // A redriven message is a new message (id, enqueue time, retention), sent as SQS's
    // redrive sends it, so the destination's delay applies; FIFO messages keep their
    // group and deduplication ids.
    rewrite: (m, now, destination) => ({
      messageId: randomUUID(),
      body: m.body,
      attributes: m.attributes,
      systemAttributes: m.systemAttributes,
      md5OfBody: m.md5OfBody,
      md5OfAttributes: m.md5OfAttributes,
      md5OfSystemAttributes: m.md5OfSystemAttributes,
      senderId: m.senderId,
      sentAt: now,
      visibleAt: now + queueNumber(destination, 'DelaySeconds') * 1000,
      groupId: m.groupId,
      dedupId: m.dedupId,
      receiveCount: 0,
      deaths: m.deaths,
      expiresAt: expiryOf(destination, now),
    }),
  };
}

/** SQS's redrive sends each message to the destination, which refuses one over its size limit. */
function tooLargeFor(m: StoredMessage, destination: QueueRecord): string | undefined {
  return messageSize(m) > queueNumber(destination, 'MaximumMessageSize') ? 'InvalidParameterValue' : undefined;
}

interface Driven {
  nextAt: number;
  stop: boolean;
  timer?: Timer;
  running?: Promise<void>;
}

/**
 * Drives move tasks in the background. Tasks are rows in the store, leased to one node
 * at a time, so a task survives a restart and, with a shared store, a node's death.
 * Each batch is one atomic store step that also records the task's progress.
 */
export class MoveTaskRunner {
  private readonly owner = randomUUID();
  private readonly driven = new Map<string, Driven>();
  private pollTimer?: Timer;
  private stopped = true;

  constructor(private readonly engine: EngineContext) {}

  start(): void {
    this.stopped = false;
    void this.poll();
  }

  /** Picks up new tasks now rather than at the next poll. */
  wake(): void {
    void this.poll();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.pollTimer?.cancel();
    for (const d of this.driven.values()) {
      d.stop = true;
      d.timer?.cancel();
    }
    await Promise.all([...this.driven.values()].map((d) => d.running));
    this.driven.clear();
    // Lets the next start (or another node) resume the tasks at once.
    await this.engine.store.moveTasks.release(this.owner).catch(() => undefined);
  }

  private async poll(): Promise<void> {
    if (this.stopped) return;
    this.pollTimer?.cancel();
    const { clock, store, log } = this.engine;
    try {
      const now = clock.now();
      for (const task of await store.moveTasks.lease(this.owner, now, now + LEASE_MS)) {
        if (!this.driven.has(task.id) && !this.stopped) await this.drive(task);
      }
    } catch (err) {
      log.error({ err }, 'move task poll failed');
    }
    if (this.stopped) return;
    // A wake() may have polled meanwhile: keep a single timer.
    this.pollTimer?.cancel();
    this.pollTimer = clock.schedule(POLL_MS, () => void this.poll());
  }

  private async drive(task: MoveTaskRecord): Promise<void> {
    const { clock, store, log } = this.engine;
    const d: Driven = { nextAt: clock.now(), stop: false };
    this.driven.set(task.id, d);
    const source = await store.queues.byId(task.sourceQueueId);
    const filter = task.filter ? JSON.parse(task.filter) : undefined;
    const rules =
      source &&
      moveRules(source, { destinationArn: task.destinationArn, filter }, (q, now) => queueExpiry(this.engine, q, now));
    const rate = task.maxPerSecond;
    const limit = rate ? Math.min(rate, RATE_BATCH) : FAST_BATCH;
    const schedule = (at: number) => {
      if (d.stop) return;
      const wait = at - clock.now();
      if (wait > 0) d.timer = clock.schedule(wait, step);
      else setImmediate(step);
    };
    const step = () => {
      if (d.stop) return;
      d.running = (async () => {
        const now = clock.now();
        const base = Math.max(d.nextAt, now - MAX_BURST_MS);
        const batch: MoveBatch = {
          // A filter may skip many messages, so a filtered batch examines more of them.
          owner: this.owner,
          now,
          leaseUntil: now + LEASE_MS,
          limit,
          scanLimit: task.filter ? limit * 10 : limit,
          scanBytes: task.filter ? FILTER_SCAN_BYTES : undefined,
          matches: (m) => !!rules && rules.matches(m, now),
          destination: (m) => rules?.destination(m),
          rewrite: (m, destination) => rules!.rewrite(m, now, destination),
          missingQueueReason: NON_EXISTENT_QUEUE,
          refusal: tooLargeFor,
        };
        try {
          const r = await store.moveTasks.runBatch(task.id, batch);
          if (!r.lost) {
            this.engine.observer.moveTask(r.task, r.moved);
            if (source) countRedrive(this.engine.observer, source, r.moved, r.sentTo ?? []);
          }
          if (r.lost || r.task.status !== 'RUNNING') {
            this.driven.delete(task.id);
            // Logged by the node that ended the task, once (a cancel is logged where it was asked).
            if (r.task.status === 'FAILED') {
              log.warn(
                {
                  task: task.id,
                  source: task.sourceArn,
                  destination: task.destinationArn,
                  moved: r.task.moved,
                  reason: r.task.failureReason,
                  // The message it stopped at stays in the DLQ (docs/security.md).
                  messageId: r.failedAt?.messageId,
                  messageSource: r.failedAt?.deadLetterSourceArn,
                },
                'move task failed',
              );
            } else if (r.task.status === 'COMPLETED' && !r.lost) {
              log.info(
                { task: task.id, source: task.sourceArn, destination: task.destinationArn, moved: r.task.moved },
                'move task finished',
              );
            }
            return;
          }
          d.nextAt = rate ? base + (r.moved * 1000) / rate : now;
          schedule(d.nextAt);
        } catch (err) {
          log.error({ err, task: task.id }, 'move batch failed; retrying');
          schedule(clock.now() + RETRY_MS);
        }
      })();
    };
    step();
  }
}

/**
 * A redrive is what SQS's own is: a receive and a delete on the queue it empties, and a
 * send to each destination (docs/monitoring.md, "One count per event").
 */
export function countRedrive(
  observer: EngineObserver,
  source: QueueRecord,
  moved: number,
  sentTo: readonly Destination[],
): void {
  if (moved === 0) return;
  observer.received(source, moved);
  observer.deleted(source, moved);
  for (const d of sentTo) observer.sent(d.queue, d.count);
}

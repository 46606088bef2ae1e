import type { Clock } from '../kernel/clock.js';
import type { EngineObserver } from '../context/observer.js';
import { MINUTE_MS, type ActivityCounts, type ActivityStore } from '../store/activity.js';
import type { DeathReason, QueueRecord } from '../kernel/types.js';

/** Rows kept for a store that keeps refusing them (about a day of 1,000 busy queues); older ones go. */
const MAX_PENDING = 1_000_000;

/**
 * The observer that keeps GetQueueActivity's counts: the same events as /metrics, so
 * both surfaces count alike (observer.ts). Each event adds to its queue's row of the
 * current minute in memory, a Map lookup; `flush` adds the rows to the store, which the
 * engine does about once a second, before each GetQueueActivity and before sampling
 * depths, so the store takes one write per queue per flush however many messages went by.
 * A process that dies loses at most the counts of its last second, never a message.
 */
export class ActivityCounter implements EngineObserver {
  /** Each queue's row of the minute of its latest event. */
  private current = new Map<number, ActivityCounts>();
  /** Rows of minutes that ended, not yet flushed. */
  private ended: ActivityCounts[] = [];

  constructor(
    private readonly store: ActivityStore,
    private readonly clock: Clock,
  ) {}

  sent(queue: QueueRecord, count: number): void {
    if (count > 0) this.row(queue.id).sent += count;
  }

  received(queue: QueueRecord, count: number): void {
    if (count > 0) this.row(queue.id).received += count;
  }

  deleted(queue: QueueRecord, count: number): void {
    if (count > 0) this.row(queue.id).deleted += count;
  }

  deadLettered(from: QueueRecord, to: number, _reason: DeathReason): void {
    this.row(from.id).deadLettered++;
    this.row(to).deadLetterArrivals++;
  }

  dropped(from: QueueRecord): void {
    this.row(from.id).deadLettered++;
  }

  cycleBroken(from: QueueRecord, _reason: DeathReason, to?: number): void {
    this.row(from.id).deadLettered++;
    if (to !== undefined) this.row(to).deadLetterArrivals++;
  }

  deduplicated(): void {}
  moveTask(): void {}
  request(): void {}

  /** The flush writing now: the next one waits for it (see flush). */
  private writing: Promise<void> = Promise.resolve();

  /**
   * Adds what was counted since the last flush to the store; on failure keeps it for the
   * next. Flushes run one after another: a reader's flush (GetQueueActivity) that found
   * nothing new must still wait for the sweep's flush that took the rows a moment before,
   * or it reads the store without them.
   */
  flush(): Promise<void> {
    const next = this.writing.catch(() => undefined).then(() => this.write());
    this.writing = next;
    return next;
  }

  private async write(): Promise<void> {
    const rows = [...this.ended, ...this.current.values()];
    if (rows.length === 0) return;
    this.ended = [];
    this.current = new Map();
    try {
      await this.store.add(rows);
    } catch (err) {
      this.ended = rows.concat(this.ended);
      if (this.ended.length > MAX_PENDING) this.ended = this.ended.slice(-MAX_PENDING);
      throw err;
    }
  }

  private row(queueId: number): ActivityCounts {
    const now = this.clock.now();
    const minute = now - (now % MINUTE_MS);
    let r = this.current.get(queueId);
    if (r?.minute === minute) return r;
    if (r) this.ended.push(r);
    r = { queueId, minute, sent: 0, received: 0, deleted: 0, deadLettered: 0, deadLetterArrivals: 0 };
    this.current.set(queueId, r);
    return r;
  }
}

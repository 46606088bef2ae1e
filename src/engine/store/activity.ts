/**
 * Per-minute activity of each queue, for the console's chart and the CLI
 * (GetQueueActivity). The counts come from the engine's observer events, summed in
 * memory per queue and minute and added here about once a second
 * (../activity-counts.ts), so a request pays no write of its own; the depth is sampled
 * once a minute by the engine (../activity-sampler.ts). Minutes are epoch milliseconds
 * rounded down to the minute.
 */
export interface ActivityStore {
  /** Adds counts to the queues' minutes (several nodes may add to the same minute). */
  add(counts: readonly ActivityCounts[]): Promise<void>;
  /** The queue's recorded minutes from `from` to `to` (inclusive), oldest first. Minutes with nothing recorded are absent. */
  minutes(queueId: number, from: number, to: number): Promise<ActivityMinute[]>;
  /**
   * The counts of the minutes from `from` to `to` (inclusive) of the queues `queueIds`, or
   * of every queue without them: one row per queue and minute that counted something.
   */
  counts(from: number, to: number, queueIds?: readonly number[]): Promise<ActivityCounts[]>;
  /** The queues with counts recorded in `minute`: the only ones whose depth that minute's operations changed. */
  active(minute: number): Promise<number[]>;
  /** Records each queue's depth (every message: visible, in flight and delayed) at the end of `minute`. */
  recordDepths(minute: number, depths: readonly (readonly [queueId: number, depth: number])[]): Promise<void>;
  /** Forgets the minutes before `before`; returns how many rows went. */
  prune(before: number): Promise<number>;
}

/** What one minute of a queue counts (docs/monitoring.md, "One count per event"). */
export interface ActivityCounts {
  queueId: number;
  minute: number;
  /** Stored by a client's send or a redrive's. */
  sent: number;
  /** Handed out by a receive, an AMQP delivery or a redrive. */
  received: number;
  /** Deleted by a client, an operator or a redrive. */
  deleted: number;
  /** Messages that left this queue by dead-lettering: moved to its DLQ, parked or dropped. */
  deadLettered: number;
  /** Messages that arrived in this queue by dead-lettering (it is their DLQ). */
  deadLetterArrivals: number;
}

export interface ActivityMinute extends Omit<ActivityCounts, 'queueId'> {
  /** The depth sampled at the end of the minute; absent when none was. */
  depth?: number;
}

export const MINUTE_MS = 60_000;

export const minuteOf = (t: number): number => t - (t % MINUTE_MS);

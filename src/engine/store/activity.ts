/**
 * Per-minute activity of each queue, for the console's chart (GetQueueActivity). The
 * counts are written by the operations themselves, in their own transaction, with the
 * counters the stores keep anyway (so a request pays nothing extra); the depth is
 * sampled once a minute by the engine (queue-activity.ts). Minutes are epoch
 * milliseconds rounded down to the minute, taken from the operation's `now`.
 */
export interface ActivityStore {
  /** The queue's recorded minutes from `from` to `to` (inclusive), oldest first. Minutes with nothing recorded are absent. */
  minutes(queueId: number, from: number, to: number): Promise<ActivityMinute[]>;
  /** The queues with counts recorded in `minute`: the only ones whose depth that minute's operations changed. */
  active(minute: number): Promise<number[]>;
  /** Records each queue's depth (every message: visible, in flight and delayed) at the end of `minute`. */
  recordDepths(minute: number, depths: readonly (readonly [queueId: number, depth: number])[]): Promise<void>;
  /** Forgets the minutes before `before`; returns how many rows went. */
  prune(before: number): Promise<number>;
}

export interface ActivityMinute {
  minute: number;
  sent: number;
  received: number;
  deleted: number;
  /** Messages of this queue that were dead-lettered (moved to its DLQ, parked or dropped). */
  deadLettered: number;
  /** The depth sampled at the end of the minute; absent when none was. */
  depth?: number;
}

export const MINUTE_MS = 60_000;

export const minuteOf = (t: number): number => t - (t % MINUTE_MS);

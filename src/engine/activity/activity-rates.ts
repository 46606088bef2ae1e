import type { EngineContext } from '../context/engine-context.js';
import { MINUTE_MS, minuteOf, type ActivityCounts } from '../store/activity.js';

/** Messages per second of each count of docs/monitoring.md's table ("One count per event"). */
export interface QueueRates {
  sent: number;
  received: number;
  deleted: number;
  deadLettered: number;
  deadLetterArrivals: number;
}

const KEYS = ['sent', 'received', 'deleted', 'deadLettered', 'deadLetterArrivals'] as const;

type MinuteCounts = Pick<ActivityCounts, (typeof KEYS)[number]>;

export const NO_RATES: QueueRates = { sent: 0, received: 0, deleted: 0, deadLettered: 0, deadLetterArrivals: 0 };

/**
 * A queue's rates at `now` from its counts of the current minute and the one before
 * (absent counts are zero): the events of the last 60 seconds, per second. The store keeps
 * counts per minute, so the previous minute counts for the part of it that lies within the
 * last 60 seconds: rate = (current + previous × (1 − elapsed / 60 s)) / 60, where elapsed
 * is how far `now` is into the current minute. That is the exact count of the last 60 s
 * when the previous minute's events were evenly spread, and it moves smoothly from one
 * minute to the next. Rounded to thousandths.
 */
export function ratesAt(
  now: number,
  current: MinuteCounts | undefined,
  previous: MinuteCounts | undefined,
): QueueRates {
  const weight = 1 - (now - minuteOf(now)) / MINUTE_MS;
  const out = { ...NO_RATES };
  for (const k of KEYS) out[k] = Math.round((((current?.[k] ?? 0) + (previous?.[k] ?? 0) * weight) / 60) * 1000) / 1000;
  return out;
}

/**
 * The rates (ratesAt) of the queues `queueIds`, or of every queue that counted something in
 * the last two minutes without them; a queue absent from the answer has none. This node's
 * counts are flushed first, so a caller sees what it just did; other nodes' are in the
 * store within their flush interval (activity-counts.ts).
 */
export async function queueRates(
  engine: EngineContext,
  queueIds?: readonly number[],
): Promise<Map<number, QueueRates>> {
  if (queueIds?.length === 0) return new Map();
  const now = engine.clock.now();
  const minute = minuteOf(now);
  await engine.activity.flush();
  const rows = await engine.store.activity.counts(minute - MINUTE_MS, minute, queueIds);
  const byQueue = new Map<number, { current?: ActivityCounts; previous?: ActivityCounts }>();
  for (const r of rows) {
    const q = byQueue.get(r.queueId) ?? {};
    if (r.minute === minute) q.current = r;
    else q.previous = r;
    byQueue.set(r.queueId, q);
  }
  return new Map([...byQueue].map(([id, q]) => [id, ratesAt(now, q.current, q.previous)]));
}

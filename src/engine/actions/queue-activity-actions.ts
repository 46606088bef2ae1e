import { ratesAt } from '../activity/activity-rates.js';
import type { ActionEngine } from './action-engine.js';
import { wireRates } from './queue-summary-actions.js';
import type { ActionInputs } from './action-inputs.js';
import { MINUTE_MS, minuteOf, type ActivityMinute } from '../store/activity.js';
import type { RequestContext } from '../kernel/types.js';
import { resolveQueue } from '../queues/queue-lookup.js';

/** Minutes GetQueueActivity returns, the current one included. */
const ACTIVITY_MINUTES = 60;

/**
 * GetQueueActivity (a Redrive extension): the queue's last hour, per minute, oldest
 * first, the current minute last. Sent, Received, Deleted, DeadLettered and
 * DeadLetterArrivals are the engine's observer events, as /metrics counts them
 * (activity-counts.ts, docs/monitoring.md); this node's are flushed first, so a caller
 * sees what it just did. Depth is the depth sampled at the
 * end of each minute (activity-sampler.ts), the live depth for the current minute, and carried
 * over minutes with no sample (before the first sample, the first one known; before the
 * queue was created, 0). Rates are its messages per second over the last minute, from
 * the last two minutes' counts (activity-rates.ts), as ListQueueSummaries gives them.
 */
export async function getQueueActivity(
  engine: ActionEngine,
  ctx: RequestContext,
  input: ActionInputs['GetQueueActivity'],
) {
  const queue = await resolveQueue(engine, ctx, input.QueueUrl);
  const now = engine.clock.now();
  const last = minuteOf(now);
  const first = last - (ACTIVITY_MINUTES - 1) * MINUTE_MS;
  await engine.activity.flush();
  const [rows, depths] = await Promise.all([
    engine.store.activity.minutes(queue.id, first, last),
    engine.store.messages.depths([queue.id], now),
  ]);
  const d = depths.get(queue.id);
  const liveDepth = d ? d.visible + d.inflight + d.delayed : 0;
  const byMinute = new Map(rows.map((r) => [r.minute, r]));
  const minutes: ActivityMinute[] = [];
  for (let m = first; m <= last; m += MINUTE_MS) {
    const r = byMinute.get(m);
    minutes.push({
      minute: m,
      sent: r?.sent ?? 0,
      received: r?.received ?? 0,
      deleted: r?.deleted ?? 0,
      deadLettered: r?.deadLettered ?? 0,
      deadLetterArrivals: r?.deadLetterArrivals ?? 0,
      depth: m === last ? liveDepth : r?.depth,
    });
  }
  // Before the queue existed it held nothing; after, carry each sampled depth forward over
  // minutes without one, and the first backwards.
  for (const m of minutes) if (m.minute + MINUTE_MS <= queue.createdAt) m.depth ??= 0;
  let known = minutes.find((m) => m.depth !== undefined)!.depth!;
  for (const m of minutes) known = m.depth ??= known;
  return {
    Rates: wireRates(ratesAt(now, byMinute.get(last), byMinute.get(last - MINUTE_MS))),
    Minutes: minutes.map((m) => ({
      Timestamp: m.minute,
      Sent: m.sent,
      Received: m.received,
      Deleted: m.deleted,
      DeadLettered: m.deadLettered,
      DeadLetterArrivals: m.deadLetterArrivals,
      Depth: m.depth,
    })),
  };
}

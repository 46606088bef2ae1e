import type { EngineContext } from './context.js';
import { MINUTE_MS, minuteOf } from './store/activity.js';

/** Minutes of activity are kept this long, then pruned: the hour GetQueueActivity shows and a margin. */
const KEEP_MS = 2 * 60 * MINUTE_MS;

const sampled = new WeakMap<EngineContext, number>();

/**
 * Once a minute (the engine's sweep, on the node holding its lease): records every
 * queue's depth as the depth at the end of the minute that just ended, with the same
 * store call as metrics, and prunes minutes older than two hours. Returns whether it ran.
 */
export async function sampleDepths(engine: EngineContext): Promise<boolean> {
  const now = engine.clock.now();
  const minute = minuteOf(now);
  if (sampled.get(engine) === minute) return false;
  sampled.set(engine, minute);
  const ids = (await engine.store.queues.all()).map((q) => q.id);
  const depths = await engine.store.messages.depths(ids, now);
  await engine.store.activity.recordDepths(minute - MINUTE_MS, [...depths].map(([id, d]) => [id, d.visible + d.inflight + d.delayed] as const));
  await engine.store.activity.prune(minute - KEEP_MS);
  return true;
}

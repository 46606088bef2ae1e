import { parseQueueArn } from '../kernel/addressing.js';
import type { EngineContext } from '../context/engine-context.js';
import { MINUTE_MS, minuteOf } from '../store/activity.js';

/** Minutes of activity are kept this long, then pruned: the hour GetQueueActivity shows and a margin. */
const KEEP_MS = 2 * 60 * MINUTE_MS;

const sampled = new WeakMap<EngineContext, number>();

/**
 * Once a minute (the engine's sweep, on the node holding its lease): records the depth
 * at the end of the minute that just ended of each queue that had operations in it, with
 * the same store call as metrics, and prunes minutes older than two hours. A queue with
 * no counted event (activity-counts.ts) kept its depth (GetQueueActivity
 * carries the last one forward), so idle queues cost nothing here, however many there
 * are. Returns whether it ran.
 */
export async function sampleDepths(engine: EngineContext): Promise<boolean> {
  const now = engine.clock.now();
  const minute = minuteOf(now);
  if (sampled.get(engine) === minute) return false;
  sampled.set(engine, minute);
  // The minute that ended is complete in the store only once this node's counts are in it.
  await engine.activity.flush();
  const ids = await withTargets(engine, await engine.store.activity.active(minute - MINUTE_MS));
  const depths = await engine.store.messages.depths(ids, now);
  await engine.store.activity.recordDepths(
    minute - MINUTE_MS,
    [...depths].map(([id, d]) => [id, d.visible + d.inflight + d.delayed] as const),
  );
  await engine.store.activity.prune(minute - KEEP_MS);
  return true;
}

/**
 * The active queues and their dead-letter queues: a dead-letter arrival is counted on the
 * queue the message left, yet it changes the depth of the queue it reached.
 */
async function withTargets(engine: EngineContext, ids: number[]): Promise<number[]> {
  const out = new Set(ids);
  for (const id of ids) {
    const queue = await engine.store.queues.byId(id);
    const target = queue && engine.settingsOf(queue).targetArn;
    const address = target && parseQueueArn(target);
    const dlq = address && (await engine.store.queues.get(address));
    if (dlq) out.add(dlq.id);
  }
  return [...out];
}

import type { ActionEngine } from './action-engine.js';
import type { ActionInputs } from './action-inputs.js';
import { retentionMs } from '../queues/queue-attributes.js';
import { rejectionReasons } from './triage.js';
import type { RequestContext } from '../kernel/types.js';
import { resolveQueue } from '../queues/queue-lookup.js';

interface Group {
  Count: number;
  OldestTimestamp: number;
  NewestTimestamp: number;
}

/**
 * GetDeadLetterBreakdown (a Redrive extension): what a dead-letter queue holds, by the
 * queue each message died in and by the reason of its latest death, each with a count
 * and the first and last time a message of it was dead-lettered (epoch milliseconds,
 * like SentTimestamp). Only dead-lettered messages count: one sent straight to the queue
 * has no source. Largest groups first.
 *
 * The store reads one index of dead-lettered messages, grouped by source and reason
 * together (dead-letters.breakdown); both views are summed from those groups here.
 * ByRejectionReason, the consumers' own texts, is read from a bounded number of the
 * messages themselves (triage.ts).
 */
export async function getDeadLetterBreakdown(
  engine: ActionEngine,
  ctx: RequestContext,
  input: ActionInputs['GetDeadLetterBreakdown'],
) {
  const queue = await resolveQueue(engine, ctx, input.QueueUrl);
  const rows = await engine.store.deadLetters.breakdown(queue.id);
  const bySource = new Map<string, Group>();
  const byReason = new Map<string, Group>();
  for (const r of rows) {
    add(bySource, r.sourceArn, r);
    add(byReason, r.reason ?? 'unknown', r);
  }
  const sorted = <K extends string>(m: Map<string, Group>, key: K) =>
    [...m]
      .map(([k, g]) => ({ [key]: k, ...g }) as Record<K, string> & Group)
      .sort((a, b) => b.Count - a.Count || (a[key] < b[key] ? -1 : 1));
  return {
    BySource: sorted(bySource, 'SourceArn'),
    ByReason: sorted(byReason, 'Reason'),
    ...(await rejectionReasons(engine, queue, engine.clock.now() - retentionMs(queue))),
  };
}

function add(m: Map<string, Group>, key: string, r: { count: number; oldest: number; newest: number }): void {
  const g = m.get(key);
  if (!g) m.set(key, { Count: r.count, OldestTimestamp: r.oldest, NewestTimestamp: r.newest });
  else {
    g.Count += r.count;
    g.OldestTimestamp = Math.min(g.OldestTimestamp, r.oldest);
    g.NewestTimestamp = Math.max(g.NewestTimestamp, r.newest);
  }
}

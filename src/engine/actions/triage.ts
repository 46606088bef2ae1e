import { PEEK_SCAN, scanQueue } from '../messages/bounded-scan.js';
import type { ActionEngine } from './action-engine.js';
import { encodeToken } from './queue-actions.js';
import type { QueueRecord, StoredMessage } from '../kernel/types.js';

/** Rejection reasons GetDeadLetterBreakdown lists, most frequent first. */
const TOP_REASONS = 10;

/**
 * Walks the queue after `cursor` within a filtered PeekMessages' budget (PEEK_SCAN: messages,
 * body characters, the event loop given back between pages); says where it stopped and
 * whether the queue ended.
 */
async function walk(engine: ActionEngine, queue: QueueRecord, cursor: number, each: (m: StoredMessage) => void) {
  let examined = 0;
  const end = await scanQueue(engine.store, queue.id, cursor, PEEK_SCAN, (m) => {
    each(m);
    examined++;
    return true;
  });
  return { examined, cursor: end.cursor, ended: end.stoppedBy === 'end' };
}

/**
 * PeekMessages with `CountOnly: true`: how many messages after NextToken match the filter
 * (expired ones never do), within PEEK_SCAN's bound. A NextToken in the
 * answer means the queue goes on: the count is then "at least", and the token resumes it.
 */
export async function countMatches(
  engine: ActionEngine,
  queue: QueueRecord,
  cursor: number,
  wanted: (m: StoredMessage) => boolean,
  cutoff: number,
) {
  let count = 0;
  const w = await walk(engine, queue, cursor, (m) => {
    if (m.sentAt >= cutoff && wanted(m)) count++;
  });
  const out: Record<string, unknown> = { Count: count, Examined: w.examined };
  // One more row would tell whether the queue ended exactly here; a token that finds nothing is cheaper.
  if (!w.ended) out.NextToken = encodeToken(String(w.cursor));
  return out;
}

/**
 * GetDeadLetterBreakdown's ByRejectionReason: the texts consumers gave when they rejected
 * the messages (RejectMessage's Reason; the latest rejection's when a message was rejected
 * more than once), the TOP_REASONS most frequent with their counts, over the queue's first
 * messages by position, within PEEK_SCAN's bound. A rejection without a text counts under "".
 */
export async function rejectionReasons(engine: ActionEngine, queue: QueueRecord, cutoff: number) {
  const counts = new Map<string, number>();
  const w = await walk(engine, queue, 0, (m) => {
    if (m.sentAt < cutoff || !m.deaths) return;
    let latest: { text: string; time: number } | undefined;
    for (const d of m.deaths) {
      if (d.reason === 'rejected' && (!latest || d.lastTime > latest.time))
        latest = { text: d.rejectReason ?? '', time: d.lastTime };
    }
    if (latest) counts.set(latest.text, (counts.get(latest.text) ?? 0) + 1);
  });
  const top = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, TOP_REASONS);
  return {
    ByRejectionReason: top.map(([Reason, Count]) => ({ Reason, Count })),
    RejectionReasonsExamined: w.examined,
    RejectionReasonsComplete: w.ended,
  };
}

import type { Engine } from './engine.js';
import { encodeToken } from './queue-actions.js';
import type { QueueRecord, StoredMessage } from './types.js';

/** Messages a count or the rejection reasons examine at most per request, as a filtered PeekMessages. */
export const TRIAGE_SCAN_LIMIT = 1_000;
/** Rejection reasons GetDeadLetterBreakdown lists, most frequent first. */
const TOP_REASONS = 10;

/** Walks at most `limit` messages of the queue after `cursor`, by position; says where it stopped and whether the queue ended. */
async function walk(engine: Engine, queue: QueueRecord, cursor: number, limit: number, each: (m: StoredMessage) => void) {
  const rows = await engine.store.messages.peek(queue.id, cursor, limit);
  for (const m of rows) each(m);
  return { examined: rows.length, cursor: rows.length ? rows[rows.length - 1]!.seq : cursor, ended: rows.length < limit };
}

/**
 * PeekMessages with `CountOnly: true`: how many messages after NextToken match the filter
 * (expired ones never do), among at most TRIAGE_SCAN_LIMIT examined. A NextToken in the
 * answer means the queue goes on: the count is then "at least", and the token resumes it.
 */
export async function countMatches(engine: Engine, queue: QueueRecord, cursor: number, wanted: (m: StoredMessage) => boolean, cutoff: number) {
  let count = 0;
  const w = await walk(engine, queue, cursor, TRIAGE_SCAN_LIMIT, (m) => {
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
 * TRIAGE_SCAN_LIMIT messages by position. A rejection without a text counts under "".
 */
export async function rejectionReasons(engine: Engine, queue: QueueRecord, cutoff: number) {
  const counts = new Map<string, number>();
  const w = await walk(engine, queue, 0, TRIAGE_SCAN_LIMIT, (m) => {
    if (m.sentAt < cutoff || !m.deaths) return;
    let latest: { text: string; time: number } | undefined;
    for (const d of m.deaths) {
      if (d.reason === 'rejected' && (!latest || d.lastTime > latest.time)) latest = { text: d.rejectReason ?? '', time: d.lastTime };
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

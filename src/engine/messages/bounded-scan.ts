import type { Store } from '../store/store.js';
import type { StoredMessage } from '../kernel/types.js';

/**
 * How much of a queue one request may read to answer (docs/security.md, "Work
 * per request"): a filter parses every body it looks at, so both the number of messages
 * and their body characters are bounded, and the event loop is given back between pages.
 */
export interface ScanBudget {
  messages: number;
  /** Body characters (string length, a cheap measure of what parsing costs). */
  bytes: number;
  /** Messages read from the store at a time; with bodies up to 1 MiB, this bounds a page's memory. */
  page: number;
}

/** Within a page, the event loop is given back after about this many body characters (a few ms of parsing). */
const YIELD_BYTES = 1024 * 1024;
/** Gives the event loop back once: what other work is waiting runs before this continues. */
export const turn = () => new Promise((resolve) => setImmediate(resolve));

export interface ScanEnd {
  /** The position of the last message examined (the start when none was). */
  cursor: number;
  /** `end`: the queue has no more; `visitor`: visit declined a message; `budget`: the budget ran out. */
  stoppedBy: 'end' | 'visitor' | 'budget';
}

/**
 * Reads the queue's messages after `cursor`, oldest first, and hands each to `visit`,
 * which returns false to stop before that message (it is then not examined, and the
 * cursor stays before it). At least one message is always examined, so a caller that
 * resumes from the cursor always moves forward.
 */
export async function scanQueue(
  store: Store,
  queueId: number,
  cursor: number,
  budget: ScanBudget,
  visit: (m: StoredMessage) => boolean,
): Promise<ScanEnd> {
  let messages = 0;
  let bytes = 0;
  let sinceYield = 0;
  for (let first = true; ; first = false) {
    if (!first) await turn();
    const size = Math.min(budget.page, budget.messages - messages);
    const rows = await store.messages.peek(queueId, cursor, size);
    for (const m of rows) {
      if (messages > 0 && (messages >= budget.messages || bytes >= budget.bytes))
        return { cursor, stoppedBy: 'budget' };
      if (sinceYield >= YIELD_BYTES) {
        sinceYield = 0;
        await turn();
      }
      if (!visit(m)) return { cursor, stoppedBy: 'visitor' };
      cursor = m.seq;
      messages++;
      bytes += m.body.length;
      sinceYield += m.body.length;
    }
    if (rows.length < size) return { cursor, stoppedBy: 'end' };
    if (messages >= budget.messages || bytes >= budget.bytes) return { cursor, stoppedBy: 'budget' };
  }
}

/**
 * What a filtered PeekMessages examines at most per request: 1,000 messages, and bodies
 * of 4 MiB in all (a JSON path parses each one), read 25 at a time with the event loop
 * given back between reads and every 1 MiB of bodies (scanQueue). PeekMessages' counts and
 * GetDeadLetterBreakdown's rejection reasons (triage.ts) read within the same bound.
 */
export const PEEK_SCAN: ScanBudget = { messages: 1_000, bytes: 4 * 1024 * 1024, page: 25 };

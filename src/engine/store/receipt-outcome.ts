import type { StoredMessage } from '../kernel/types.js';
import type { DeleteRule, ReceiptOutcome, ReceiptRef, VisibilityChange } from './receipts.js';

/**
 * Judges a receipt against the message it names, the same way in every store: each
 * store reads the row under its own lock, asks here, and writes what this decides.
 */
export function deleteOutcome(
  m: Pick<StoredMessage, 'receiptToken' | 'visibleAt'> | undefined,
  ref: ReceiptRef,
  rule: DeleteRule,
): ReceiptOutcome {
  if (!m) return 'gone';
  if (!rule.requireCurrent) return 'ok';
  if (m.receiptToken !== ref.token || m.visibleAt <= rule.now) return 'lapsed';
  return 'ok';
}

export function visibilityOutcome(
  m: Pick<StoredMessage, 'receiptToken' | 'visibleAt' | 'receivedAt'> | undefined,
  change: VisibilityChange,
  now: number,
): { outcome: ReceiptOutcome; visibleAt?: number } {
  if (!m) return { outcome: 'gone' };
  // On a standard queue any receipt of the message still works, an older one (SQS
  // accepts the handle of an earlier receive) or a lapsed one (SQS re-hides the
  // message); on a FIFO queue only the current, unlapsed receipt does.
  if (m.receiptToken !== change.token && change.requireCurrent) return { outcome: 'stale' };
  if (m.visibleAt <= now && change.requireCurrent) return { outcome: 'lapsed' };
  const visibleAt = now + change.visibilityTimeoutMs;
  if (m.receivedAt !== null && visibleAt > m.receivedAt + change.maxSinceReceiveMs) return { outcome: 'tooLong' };
  return { outcome: 'ok', visibleAt };
}

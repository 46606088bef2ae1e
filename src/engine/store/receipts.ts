/** A receipt handle as stores see it, and how operations on one turn out. */

export interface ReceiptRef {
  seq: number;
  token: string;
}

export interface DeleteRule {
  now: number;
  /**
   * FIFO: only the current, unlapsed receipt deletes. Standard: any receipt of the
   * message deletes it, as SQS does with an old receipt handle.
   */
  requireCurrent: boolean;
}

export interface VisibilityChange extends ReceiptRef {
  visibilityTimeoutMs: number;
  /** A receipt may not keep the message invisible past receivedAt + this. */
  maxSinceReceiveMs: number;
  /** FIFO: a receipt whose visibility window has passed can no longer change it. */
  requireCurrent: boolean;
}

/**
 * ok: applied. stale: a later receipt superseded this one (nothing done).
 * lapsed: the receipt's visibility window has passed. notInflight: the message is
 * visible. gone: the message no longer exists. tooLong: past the 12-hour cap.
 */
export type ReceiptOutcome = 'ok' | 'stale' | 'lapsed' | 'notInflight' | 'gone' | 'tooLong';

/**
 * One minute of GetQueueActivity (docs/extensions.md). Pure: the console's pages and the
 * CLI (`redrive queues activity`) both use it.
 */
export interface ActivityMinute {
  Timestamp: number;
  Sent: number;
  Received: number;
  Deleted: number;
  DeadLettered: number;
  /** Messages that arrived by dead-lettering: this queue is their DLQ. */
  DeadLetterArrivals: number;
  Depth: number;
}

/**
 * The last hour's totals in words, as the console's queue page and `redrive queues
 * activity` both print them: the counters of docs/monitoring.md's table.
 */
export function activityTotals(minutes: ActivityMinute[]): string {
  const sum = (k: 'Sent' | 'Received' | 'Deleted' | 'DeadLettered' | 'DeadLetterArrivals') =>
    minutes.reduce((n, m) => n + m[k], 0).toLocaleString('en-US');
  return (
    `${sum('Sent')} sent, ${sum('Received')} received, ${sum('Deleted')} deleted, ${sum('DeadLettered')} dead-lettered, ` +
    `${sum('DeadLetterArrivals')} arrived by dead-lettering; ${(minutes[minutes.length - 1]?.Depth ?? 0).toLocaleString('en-US')} in the queue now.`
  );
}

import type { DeathReason } from './deaths.js';

/**
 * Selective redrive (a Redrive extension of StartMessageMoveTask): which messages of a
 * dead-letter queue a task moves. Every condition given must hold.
 */
export interface MoveFilter {
  MessageAttribute?: { Name: string; Value: string };
  BodyContains?: string;
  /** A path such as `$.order.items[0].sku`; with Equals, the value there must equal it. */
  BodyJsonPath?: string;
  Equals?: unknown;
  /** The queue the message died in (its DeadLetterQueueSourceArn). */
  DeadLetterQueueSourceArn?: string;
  /** Epoch milliseconds; messages sent straight to the queue were never dead-lettered. */
  DeadLetteredAfter?: number;
  DeadLetteredBefore?: number;
  /** The reason of the message's latest death (`rejected`, `expired`, `maxlen`, `delivery_limit`): why it is where it is. */
  DeathReason?: DeathReason;
}

/** A move task as ListMessageMoveTasks lists it, with Redrive's Filter (docs/extensions.md). */
export interface MoveTask {
  TaskHandle?: string;
  Status: 'RUNNING' | 'COMPLETED' | 'CANCELLING' | 'CANCELLED' | 'FAILED';
  SourceArn: string;
  DestinationArn?: string;
  MaxNumberOfMessagesPerSecond?: number;
  ApproximateNumberOfMessagesMoved: number;
  ApproximateNumberOfMessagesToMove?: number;
  FailureReason?: string;
  StartedTimestamp: number;
  Filter?: MoveFilter;
}

/** An epoch-milliseconds time as ISO 8601; `-` when there is none. */
export const time = (ms: number | string | null | undefined) =>
  ms === undefined || ms === null ? '-' : new Date(Number(ms)).toISOString();

/** The queue name at the end of a queue ARN or URL; `-` when there is none. */
export const name = (arnOrUrl: string | undefined) => (arnOrUrl ? arnOrUrl.split(/[/:]/).pop()! : '-');

/**
 * A selective-redrive filter in words, as the CLI's flags would give it:
 * `$.order = 2, reason rejected`; `all` for no filter.
 */
export function filterText(filter: MoveFilter | undefined): string {
  const f = (filter ?? {}) as Record<string, unknown>;
  if (!Object.keys(f).length) return 'all';
  const parts: string[] = [];
  for (const [k, v] of Object.entries(f)) {
    if (k === 'MessageAttribute') {
      const a = v as { Name: string; Value: string };
      parts.push(`attribute ${a.Name}=${a.Value}`);
    } else if (k === 'BodyContains') parts.push(`body contains ${JSON.stringify(v)}`);
    else if (k === 'BodyJsonPath')
      parts.push(f.Equals === undefined ? `has ${String(v)}` : `${String(v)} = ${JSON.stringify(f.Equals)}`);
    else if (k === 'DeadLetterQueueSourceArn') parts.push(`from ${name(String(v))}`);
    else if (k === 'DeadLetteredAfter') parts.push(`died after ${time(v as number)}`);
    else if (k === 'DeadLetteredBefore') parts.push(`died before ${time(v as number)}`);
    else if (k === 'DeathReason') parts.push(`reason ${String(v)}`);
  }
  return parts.join(', ');
}

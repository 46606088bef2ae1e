import { peekPages } from './peek.js';
import type { SqsJsonClient } from './sqs-client.js';

/** At most this many messages are examined to explain what a redrive left behind. */
const EXAMINE = 1000;

export interface LeftBehindReason {
  Reason: string;
  Count: number;
}

/**
 * Why messages a task was to move are still in the queue, from a peek of what matches its
 * filter: the rules a move task follows (move-task-runner.ts), said for a person.
 */
export async function leftBehind(
  sqs: SqsJsonClient,
  url: string,
  filter: object | undefined,
  fixedDestination: boolean,
): Promise<LeftBehindReason[]> {
  const { messages } = await peekPages(sqs, url, EXAMINE, undefined, filter);
  const counts = new Map<string, number>();
  for (const m of messages) {
    let reason: string | undefined;
    if (m.State === 'IN_FLIGHT')
      reason =
        'in flight: a consumer of the dead-letter queue holds them; they move once visible again (run the redrive again)';
    else if (m.State === 'DELAYED') reason = 'delayed: not visible yet; run the redrive again later';
    else if (!fixedDestination && m.Attributes.DeadLetterQueueSourceArn === undefined) {
      reason =
        'with no source queue to return to (sent straight to the dead-letter queue): redrive them with --to <queue>';
    }
    if (reason) counts.set(reason, (counts.get(reason) ?? 0) + 1);
  }
  return [...counts].map(([Reason, Count]) => ({ Reason, Count }));
}

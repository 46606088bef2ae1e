/** Redrive's extensions the console's pages use besides PeekMessages (docs/extensions.md). */
import type { ActivityMinute } from '../../wire/activity.js';
import type {
  DeleteMessagesByIdResult as DeleteResult,
  MoveMessagesByIdResult as MoveResult,
} from '../../wire/by-id.js';
import type { DeadLetterBreakdown as Breakdown } from '../../wire/dead-letters.js';
import type { Rates } from '../../wire/queue-summaries.js';
import { call } from './api.js';

export type { ActivityMinute, Breakdown, DeleteResult, MoveResult };

export const deadLetterBreakdown = (url: string) => call<Breakdown>('GetDeadLetterBreakdown', { QueueUrl: url });

export const queueActivity = (url: string) =>
  call<{ Minutes: ActivityMinute[]; Rates: Rates }>('GetQueueActivity', { QueueUrl: url });

/** Deletes messages by id, ten per request (the extension's batch limit); the results of every request together. */
export async function deleteMessagesById(url: string, ids: string[]): Promise<DeleteResult> {
  const out: DeleteResult = { Successful: [], Failed: [] };
  for (let i = 0; i < ids.length; i += 10) {
    const r = await call<DeleteResult>('DeleteMessagesById', { QueueUrl: url, MessageIds: ids.slice(i, i + 10) });
    out.Successful.push(...r.Successful);
    out.Failed.push(...r.Failed);
  }
  return out;
}

/** Moves messages by id (to their sources, or to `destinationArn`), ten per request; the results of every request together. */
export async function moveMessagesById(url: string, ids: string[], destinationArn?: string): Promise<MoveResult> {
  const out: MoveResult = { Successful: [], Failed: [] };
  for (let i = 0; i < ids.length; i += 10) {
    const r = await call<MoveResult>('MoveMessagesById', {
      QueueUrl: url,
      MessageIds: ids.slice(i, i + 10),
      DestinationArn: destinationArn,
    });
    out.Successful.push(...r.Successful);
    out.Failed.push(...r.Failed);
  }
  return out;
}

export const changeVisibilityById = (url: string, id: string, seconds: number) =>
  call('ChangeMessageVisibilityById', { QueueUrl: url, MessageId: id, VisibilityTimeout: seconds });

/** Requests a count makes at most: the server examines 1,000 messages per request. */
const COUNT_REQUESTS = 10;

/** How many messages match `filter`, from the start of the queue; `exact` false means "at least". */
export async function countMatches(
  url: string,
  filter?: object,
): Promise<{ count: number; examined: number; exact: boolean }> {
  let token: string | undefined;
  let count = 0;
  let examined = 0;
  for (let i = 0; i < COUNT_REQUESTS; i++) {
    const r = await call<{ Count: number; Examined: number; NextToken?: string }>('PeekMessages', {
      QueueUrl: url,
      CountOnly: true,
      NextToken: token,
      Filter: filter,
    });
    count += r.Count;
    examined += r.Examined;
    token = r.NextToken;
    if (!token) break;
  }
  return { count, examined, exact: !token };
}

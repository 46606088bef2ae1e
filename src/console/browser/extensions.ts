import { call, isUnknownAction } from './api.js';

/**
 * Extensions the server may not have yet. Each returns undefined when the server answers
 * that the action is unknown, and the page then leaves its control out.
 */
async function optional<T>(action: string, input: Record<string, unknown>): Promise<T | undefined> {
  try {
    return await call<T>(action, input);
  } catch (e) {
    if (isUnknownAction(e)) return undefined;
    throw e;
  }
}

export interface Breakdown {
  BySource: { SourceArn: string; Count: number; OldestTimestamp: number; NewestTimestamp: number }[];
  ByReason: { Reason: string; Count: number; OldestTimestamp: number; NewestTimestamp: number }[];
}

export const deadLetterBreakdown = (url: string) => optional<Breakdown>('GetDeadLetterBreakdown', { QueueUrl: url });

export interface ActivityMinute {
  Timestamp: number;
  Sent: number;
  Received: number;
  Deleted: number;
  DeadLettered: number;
  Depth: number;
}

export const queueActivity = (url: string) => optional<{ Minutes: ActivityMinute[] }>('GetQueueActivity', { QueueUrl: url });

export interface DeleteResult {
  Successful: { Id: string }[];
  Failed: { Id: string; Code: string; Message: string }[];
}

export const deleteMessagesById = (url: string, ids: string[]) => optional<DeleteResult>('DeleteMessagesById', { QueueUrl: url, MessageIds: ids });

const known = new Map<string, Promise<boolean>>();

/**
 * Whether the server knows `DeleteMessagesById`, asked with an empty list, which deletes
 * nothing whatever the answer.
 */
export function canDeleteById(url: string): Promise<boolean> {
  let answer = known.get('DeleteMessagesById');
  if (!answer) {
    answer = call('DeleteMessagesById', { QueueUrl: url, MessageIds: [] }).then(() => true, (e) => !isUnknownAction(e));
    known.set('DeleteMessagesById', answer);
  }
  return answer;
}

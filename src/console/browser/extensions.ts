import { call } from './api.js';

/** Redrive's extensions the console's pages use besides PeekMessages (docs/extensions.md). */
export interface Breakdown {
  BySource: { SourceArn: string; Count: number; OldestTimestamp: number; NewestTimestamp: number }[];
  ByReason: { Reason: string; Count: number; OldestTimestamp: number; NewestTimestamp: number }[];
}

export const deadLetterBreakdown = (url: string) => call<Breakdown>('GetDeadLetterBreakdown', { QueueUrl: url });

import type { ActivityMinute } from './activity-totals.js';

export type { ActivityMinute };

export const queueActivity = (url: string) => call<{ Minutes: ActivityMinute[] }>('GetQueueActivity', { QueueUrl: url });

export interface DeleteResult {
  Successful: { Id: string }[];
  Failed: { Id: string; Code: string; Message: string }[];
}

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

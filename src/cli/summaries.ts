import type { QueueSummary } from '../wire/queue-summaries.js';
import type { SqsJsonClient } from './sqs-client.js';

/** Every queue of the account with its counts: one request per 1,000 queues. */
export async function allSummaries(sqs: SqsJsonClient, prefix?: string): Promise<QueueSummary[]> {
  const all: QueueSummary[] = [];
  let token: string | undefined;
  do {
    const page = await sqs.call<{ Queues: QueueSummary[]; NextToken?: string }>('ListQueueSummaries', {
      MaxResults: 1000,
      ...(prefix ? { QueueNamePrefix: prefix } : {}),
      ...(token ? { NextToken: token } : {}),
    });
    all.push(...page.Queues);
    token = page.NextToken;
  } while (token);
  return all;
}

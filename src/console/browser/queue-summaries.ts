import { call, deadLetterSources, isUnknownAction, listQueueUrls, mapLimit, peek, queueAttributes } from './api.js';
import { queueNameOf } from './dom.js';

/**
 * The overview's data, in one place. It asks for `ListQueueSummaries` (one request for
 * every queue), and while the server does not know that action, builds the same rows from
 * ListQueues, GetQueueAttributes(All) and ListDeadLetterSourceQueues per queue, plus one
 * PeekMessages of a non-empty queue for the age of its oldest message.
 */
export interface QueueSummary {
  QueueUrl: string;
  QueueName: string;
  QueueArn: string;
  FifoQueue: boolean;
  ApproximateNumberOfMessages: number;
  ApproximateNumberOfMessagesNotVisible: number;
  ApproximateNumberOfMessagesDelayed: number;
  ApproximateAgeOfOldestMessage?: number;
  RedrivePolicy?: string;
  DeadLetterSourceQueueUrls: string[];
}

let summariesUnknown = false;

export async function loadQueueSummaries(): Promise<QueueSummary[]> {
  if (!summariesUnknown) {
    try {
      const queues: QueueSummary[] = [];
      let token: string | undefined;
      do {
        const out = await call<{ Queues?: QueueSummary[]; NextToken?: string }>('ListQueueSummaries', { MaxResults: 1000, NextToken: token });
        queues.push(...(out.Queues ?? []));
        token = out.NextToken;
      } while (token);
      return queues;
    } catch (e) {
      if (!isUnknownAction(e)) throw e;
      summariesUnknown = true;
    }
  }
  return mapLimit(await listQueueUrls(), 6, summaryOf);
}

async function summaryOf(url: string): Promise<QueueSummary> {
  const [a, sources] = await Promise.all([queueAttributes(url), deadLetterSources(url)]);
  const visible = Number(a.ApproximateNumberOfMessages ?? 0);
  const summary: QueueSummary = {
    QueueUrl: url,
    QueueName: queueNameOf(url),
    QueueArn: a.QueueArn ?? '',
    FifoQueue: a.FifoQueue === 'true',
    ApproximateNumberOfMessages: visible,
    ApproximateNumberOfMessagesNotVisible: Number(a.ApproximateNumberOfMessagesNotVisible ?? 0),
    ApproximateNumberOfMessagesDelayed: Number(a.ApproximateNumberOfMessagesDelayed ?? 0),
    RedrivePolicy: a.RedrivePolicy,
    DeadLetterSourceQueueUrls: sources,
  };
  if (visible + summary.ApproximateNumberOfMessagesNotVisible + summary.ApproximateNumberOfMessagesDelayed > 0) {
    const oldest = (await peek(url, 1)).Messages?.[0];
    if (oldest) summary.ApproximateAgeOfOldestMessage = Math.max(0, (Date.now() - Number(oldest.Attributes.SentTimestamp)) / 1000);
  }
  return summary;
}

/** The ARN a RedrivePolicy names, if it parses. */
export function deadLetterTargetOf(redrivePolicy: string | undefined): { arn: string; maxReceiveCount: number } | undefined {
  if (!redrivePolicy) return undefined;
  try {
    const p = JSON.parse(redrivePolicy) as { deadLetterTargetArn?: string; maxReceiveCount?: number | string };
    return p.deadLetterTargetArn ? { arn: p.deadLetterTargetArn, maxReceiveCount: Number(p.maxReceiveCount) } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A queue as ListQueueSummaries describes it: its counts, the age of its oldest message,
 * the redrive policy in force and the queues that dead-letter into it (docs/extensions.md).
 */
export interface QueueSummary {
  QueueUrl: string;
  QueueName: string;
  QueueArn: string;
  FifoQueue: boolean;
  Region: string;
  ApproximateNumberOfMessages: number;
  ApproximateNumberOfMessagesNotVisible: number;
  ApproximateNumberOfMessagesDelayed: number;
  ApproximateAgeOfOldestMessage?: number;
  RedrivePolicy?: string;
  /** `queue`, or `policy:<name>` when a server policy supplies it. */
  RedrivePolicySource?: string;
  DeadLetterSourceQueueUrls: string[];
  /** AMQP: the queue dead-letters through this exchange (x-dead-letter-exchange), to these queues. */
  DeadLetterExchange?: string;
  DeadLetterRoutingKey?: string;
  DeadLetterTargetQueueNames?: string[];
  /** Messages per second over the last minute (docs/monitoring.md, "Rates"). */
  Rates?: Rates;
  /** The sources that dead-letter here through an AMQP dead-letter exchange, with it. */
  DeadLetterSourceExchanges?: { QueueUrl: string; Exchange: string }[];
}

export interface Rates {
  Sent: number;
  Received: number;
  Deleted: number;
  DeadLettered: number;
  DeadLetterArrivals: number;
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

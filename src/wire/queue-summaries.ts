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

/** A queue's messages per second over the last minute, by event (docs/monitoring.md, "Rates"). */
export interface Rates {
  Sent: number;
  Received: number;
  Deleted: number;
  DeadLettered: number;
  DeadLetterArrivals: number;
}

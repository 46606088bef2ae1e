/**
 * A dead letter's history as every wall sees it: the engine stores it, the SQS and AMQP
 * adapters show it (RedriveDeathHistory, x-death, x-opt-deaths), and the console and the
 * CLI read and filter by it. One list of reasons, so adding one is one line here and the
 * compiler finds every switch that must learn it.
 */

/** Why a message was dead-lettered, with RabbitMQ's names. */
export const DEATH_REASONS = ['delivery_limit', 'rejected', 'expired', 'maxlen'] as const;
export type DeathReason = (typeof DEATH_REASONS)[number];

export function isDeathReason(v: unknown): v is DeathReason {
  return typeof v === 'string' && (DEATH_REASONS as readonly string[]).includes(v);
}

/** One entry of a message's dead-letter history: every death from one queue for one reason. */
export interface Death {
  /** The name and ARN of the queue the message died in. */
  queue: string;
  queueArn: string;
  reason: DeathReason;
  count: number;
  firstTime: number;
  lastTime: number;
  /** `rejected`: the text the consumer gave with its latest rejection. */
  rejectReason?: string;
  /** The message's own TTL, removed when it first died (RabbitMQ's original-expiration). */
  originalTtlSeconds?: number;
  /**
   * AMQP messages (x-death): the exchange and routing keys (with CC, without BCC) the
   * message had, and its `expiration` property, when it first died here for this reason.
   */
  exchange?: string;
  routingKeys?: string[];
  originalExpiration?: string;
}

/** PeekMessages' FirstDeath and LastDeath. */
export interface DeathSummary {
  queue: string;
  queueArn: string;
  reason: DeathReason;
  time: number;
}

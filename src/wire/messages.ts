import type { Death, DeathSummary } from './deaths.js';

export type { Death, DeathSummary };
/**
 * A message as PeekMessages returns it, with its dead-letter history (docs/extensions.md):
 * what the console's message pages and the CLI's `messages peek`, `dlq peek` and `messages
 * export` read.
 */
export interface PeekedMessage {
  MessageId: string;
  Body: string;
  MD5OfBody: string;
  Attributes: Record<string, string>;
  MessageAttributes?: Record<string, { DataType: string; StringValue?: string; BinaryValue?: string }>;
  Position: number;
  State: 'VISIBLE' | 'IN_FLIGHT' | 'DELAYED';
  VisibleTimestamp: number;
  DeadLetteredTimestamp?: number;
  ExpiresTimestamp?: number;
  DeathHistory?: Death[];
  FirstDeath?: DeathSummary;
  LastDeath?: DeathSummary;
  /** A message published over AMQP (or imported as one). */
  Amqp?: AmqpView;
  /** 'base64': the body is binary, given base64. */
  BodyEncoding?: string;
}

/** A message published over AMQP: its exchange, routing keys and properties. */
export interface AmqpView {
  Exchange: string;
  RoutingKey: string;
  RoutingKeys?: string[];
  /** As PeekMessages gives them (src/protocols/amqp/property-json.ts): headers keep their field types. */
  Properties: Record<string, unknown>;
}

import { randomBytes } from 'node:crypto';
import { propertiesFromRaw, rawProperties } from './properties.js';

/** RabbitMQ's direct reply-to pseudo-queue: consumed (no-ack) by a requester, never declared. */
export const REPLY_QUEUE = 'amq.rabbitmq.reply-to';
const PREFIX = `${REPLY_QUEUE}.`;

/** A channel consuming its replies: where a reply published to its address goes. */
export interface ReplyTarget {
  readonly accountId: string;
  /** Writes the reply to the requester's reply consumer (basic.deliver, no ack). */
  deliverReply(reply: { exchange: string; routingKey: string; properties: Buffer; body: Buffer }): void;
}

/** A new reply address, opaque and unguessable: `amq.rabbitmq.reply-to.<token>`. */
export function newReplyAddress(): string {
  return PREFIX + randomBytes(18).toString('base64url');
}

/** Whether a publish goes to a reply address (the default exchange, a key naming one). */
export function isReplyAddress(exchange: string, routingKey: string): boolean {
  return exchange === '' && routingKey.startsWith(PREFIX);
}

/** The properties with `reply-to` set to the requester's reply address. */
export function withReplyTo(raw: Buffer, address: string): Buffer {
  return rawProperties({ ...propertiesFromRaw(raw), replyTo: address });
}

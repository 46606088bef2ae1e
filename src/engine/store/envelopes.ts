import type { MessageAttributes } from '../kernel/types.js';
import type { ReceiptRef } from './receipts.js';

/** New system attributes for a message its holder has in flight, under its current receipt. */
export interface HeldRewrite extends ReceiptRef {
  systemAttributes: MessageAttributes;
}

/**
 * What a message carries, rewritten while its holder has it: AMQP's envelope
 * (engine/amqp/envelope.ts) changes when an AMQP 1.0 receiver's `modified` outcome
 * merges message annotations into it, and when a `released` delivery is counted, before
 * the message is requeued or dead-lettered. Only the message's current receipt rewrites
 * it, so a message that was delivered again meanwhile, moved or deleted is left alone;
 * its body, attributes, position and visibility stay as they are.
 */
export interface EnvelopeStore {
  /** Applies each rewrite whose receipt is the message's current one; true for those, in order. */
  rewrite(queueId: number, rewrites: readonly HeldRewrite[]): Promise<boolean[]>;
}

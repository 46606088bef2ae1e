import type { Publish } from '../../engine/amqp/publish.js';

/** A whole publish waiting to be stored: by its channel's batch, or by its transaction's commit. */
export interface QueuedPublish {
  seq: number;
  /** What it holds in memory while it waits to be stored: its body and its decoded headers. */
  bytes: number;
  mandatory: boolean;
  publish: Publish;
  /** Found while assembling it (an invalid expiration): raised at its turn. */
  error?: unknown;
  /** Its reply-to is `amq.rabbitmq.reply-to`: the channel's reply address replaces it at its turn. */
  directReply?: boolean;
}

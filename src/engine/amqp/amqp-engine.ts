import type { EngineContext } from '../context/engine-context.js';
import type { LongPolls } from '../messages/long-poll.js';
import type { NewQueue } from '../store/queues.js';
import type { SqsError } from '../kernel/errors.js';
import type { QueueRecord } from '../kernel/types.js';
import type { AccountCounter } from '../kernel/account-counter.js';
import type { BindingLimits } from './binding-quota.js';
import type { DeliveryHolders } from './delivery-holders.js';

/**
 * What the broker, its exchanges and its publishes are handed: the context every engine
 * part has, and the parts of the engine AMQP uses besides. The composer (engine.ts)
 * implements it; this folder never imports the composer, so the layers run one way.
 */
export interface AmqpEngine extends EngineContext {
  readonly longPolls: LongPolls;
  /** Each account's queues (queues/quotas.ts). */
  readonly queueQuota: AccountCounter;
  readonly deliveryHolders: DeliveryHolders;
  /** Each account's AMQP bindings (binding-quota.ts), and the limits they are held to. */
  readonly bindingQuota: AccountCounter;
  readonly bindingLimits: BindingLimits;
  /** Creates the queue unless it exists, within its account's queue quota (engine.ts). */
  createWithinQuota(
    queue: NewQueue,
    refusal?: (e: SqsError) => Error,
  ): Promise<{ queue: QueueRecord; created: boolean }>;
  /** A queue was deleted: whoever holds on to it on this node (AMQP consumers) lets go. */
  queueDeleted(queueId: number): void;
}

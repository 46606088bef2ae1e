import type { ActionEngine } from './action-engine.js';
import type { ActionInputs } from './action-inputs.js';
import { errors } from '../kernel/errors.js';
import type { RequestContext } from '../kernel/types.js';

/**
 * ReleaseAmqpDeliveries (a Redrive extension, docs/extensions.md): returns to their
 * queues the unacknowledged AMQP deliveries of server processes that are gone, as every
 * server does by itself when it starts (and, on PostgreSQL, every 10 seconds). For an
 * operator who will not wait for that, or who wants to see which processes still hold
 * deliveries. Input: Holder (optional, one process's holder id); without it every gone
 * process's deliveries are released. A process that is running is never released: its
 * consumers' deliveries come back when their channels close. Each call is logged with its caller.
 */
export async function releaseAmqpDeliveries(
  engine: ActionEngine,
  ctx: RequestContext,
  input: ActionInputs['ReleaseAmqpDeliveries'],
) {
  const holders = engine.deliveryHolders;
  const before = await holders.holders();
  let released: number;
  if (input.Holder !== undefined && input.Holder !== null) {
    if (typeof input.Holder !== 'string') throw errors.invalidParameterValue('Holder must be a string.');
    released = await holders.release(input.Holder);
  } else {
    released = await holders.releaseGone();
  }
  engine.log.info(
    { by: ctx.accountId, holder: input.Holder ?? 'every stopped process', released },
    'AMQP deliveries released by an operator',
  );
  return {
    Released: released,
    Self: holders.holder,
    Holders: before.map((h) => ({ Holder: h.holder, Alive: h.alive })),
  };
}

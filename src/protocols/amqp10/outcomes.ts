import type { AmqpBroker, Delivery } from '../../engine/amqp/broker.js';
import { CODE, field, type Composite } from './frames.js';
import { boolOf } from './types.js';

/**
 * A receiver's outcome for deliveries, as RabbitMQ 4 applies it: `accepted` acknowledges;
 * `released` requeues without counting the delivery against a delivery limit;
 * `rejected` dead-letters (reason `rejected`) or drops without a dead-letter target;
 * `modified` with `undeliverable-here` dead-letters too, with `delivery-failed` requeues
 * and counts toward a quorum queue's delivery limit, with neither requeues as released.
 * Settling without an outcome accepts; an unknown outcome releases.
 */
export async function settle(broker: AmqpBroker, deliveries: Delivery[], state: Composite | undefined): Promise<void> {
  const code = state?.code ?? CODE.accepted;
  for (const [queue, list] of byQueue(deliveries)) {
    if (code === CODE.accepted) await broker.ack(queue, list);
    else if (code === CODE.released) await broker.requeue(queue, list, false);
    else if (code === CODE.rejected) for (const d of list) await broker.reject(queue, d);
    else if (code === CODE.modified) {
      const failed = boolOf(field(state, 0)) === true;
      const undeliverable = boolOf(field(state, 1)) === true;
      if (undeliverable) for (const d of list) await broker.reject(queue, d);
      else await broker.requeue(queue, list, failed);
    } else await broker.requeue(queue, list, false);
  }
}

function byQueue(deliveries: Delivery[]): Map<Delivery['queue'], Delivery[]> {
  const m = new Map<Delivery['queue'], Delivery[]>();
  for (const d of deliveries) {
    const list = m.get(d.queue) ?? [];
    list.push(d);
    m.set(d.queue, list);
  }
  return m;
}

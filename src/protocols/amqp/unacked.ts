import type { Delivery } from '../../engine/amqp/broker.js';
import type { Consumer } from './consumer.js';

const EMPTY = Buffer.alloc(0);

/** A delivery waiting for its ack, and the consumer it went to (none for basic.get). */
export interface Unacked {
  delivery: Delivery;
  consumer?: Consumer;
}

/**
 * What a delivery keeps once it is written: settling it needs its receipt, never its
 * body or properties, so an unacknowledged delivery holds a few hundred bytes, whatever
 * its size.
 */
export function settleOnly(d: Delivery): Delivery {
  return { ...d, content: { ...d.content, body: EMPTY, properties: EMPTY, deaths: undefined } };
}

/** Deliveries grouped by queue, in order, for one store call per queue. */
export function byQueue(deliveries: Delivery[]): Delivery[][] {
  const groups = new Map<number, Delivery[]>();
  for (const d of deliveries) {
    const list = groups.get(d.queue.id);
    if (list) list.push(d);
    else groups.set(d.queue.id, [d]);
  }
  return [...groups.values()];
}

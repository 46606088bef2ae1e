import type { AmqpBroker, Delivery } from '../../engine/amqp/broker.js';
import { CODE, compositeOf, field, type Composite } from './frames.js';
import { annotatedContent, modifiedAnnotations } from './modified-annotations.js';
import { boolOf, type Value } from './types.js';

/**
 * A receiver's outcome for deliveries, as RabbitMQ 4 applies it: `accepted` acknowledges;
 * `released` requeues, counted as released so that it counts neither toward a delivery
 * limit nor in the header's delivery-count; `rejected` dead-letters (reason `rejected`)
 * or drops without a dead-letter target; `modified` merges its message annotations into
 * a quorum queue's message (modified-annotations.ts), then with `undeliverable-here`
 * dead-letters too, with `delivery-failed` requeues and counts toward a quorum queue's
 * delivery limit, with neither requeues as released. Settling without an outcome
 * accepts; an unknown outcome releases.
 */
async function settle(
  broker: AmqpBroker,
  deliveries: Delivery[],
  state: Composite | undefined,
  annotations: ReadonlyMap<string, Value> | undefined,
): Promise<void> {
  const code = state?.code ?? CODE.accepted;
  for (const [queue, list] of byQueue(deliveries)) {
    if (code === CODE.accepted) await broker.ack(queue, list);
    else if (code === CODE.rejected) for (const d of list) await broker.reject(queue, d);
    else if (code === CODE.modified) {
      if (annotations) await broker.annotate(queue, list, (d) => annotatedContent(d, annotations));
      const failed = boolOf(field(state, 0)) === true;
      const undeliverable = boolOf(field(state, 1)) === true;
      if (undeliverable) for (const d of list) await broker.reject(queue, d);
      else if (failed) await broker.requeue(queue, list, true);
      else await broker.release(queue, list);
    } else await broker.release(queue, list);
  }
}

/** A disposition's state, with a modified outcome's annotations checked. */
export interface Outcome {
  state?: Composite;
  annotations?: ReadonlyMap<string, Value>;
}

/** The outcome of a disposition's state: a reserved annotation key in a modified outcome throws, ending the session. */
export function outcomeOf(x: Value | undefined): Outcome {
  const state = compositeOf(x);
  return { state, annotations: modifiedAnnotations(state) };
}

/**
 * A session's settlements: acceptances that arrive together (a receiver settles each
 * delivery with its own disposition, and they come in one read) are deleted together,
 * one delete per queue, as 0-9-1's acks are batched; other outcomes apply at once.
 */
export class Settlements {
  private accepted: Delivery[] = [];
  private scheduled = false;

  constructor(
    private readonly broker: AmqpBroker,
    private readonly failed: (e: unknown) => void,
  ) {}

  add(deliveries: Delivery[], { state, annotations }: Outcome): void {
    if ((state?.code ?? CODE.accepted) !== CODE.accepted) {
      settle(this.broker, deliveries, state, annotations).catch(this.failed);
      return;
    }
    this.accepted.push(...deliveries);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      const batch = this.accepted;
      this.accepted = [];
      this.scheduled = false;
      settle(this.broker, batch, undefined, undefined).catch(this.failed);
    });
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

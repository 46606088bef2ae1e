import type { EngineContext } from '../context/engine-context.js';
import type { MessageAttributes, QueueRecord } from '../kernel/types.js';
import { envelopeAttributes, envelopeOf, type Amqp10Sections, type Envelope } from '../routing/envelope.js';

/**
 * Changes an AMQP 1.0 receiver makes to a message it holds before giving it back, as
 * RabbitMQ 4 makes them (docs/amqp.md, "Receiving"): a `released` delivery is counted, so
 * that neither the header's delivery-count nor a quorum queue's delivery limit counts it;
 * a `modified` outcome's message annotations are merged into a quorum queue's message
 * before it is requeued or dead-lettered. Both rewrite the envelope under the delivery's
 * receipt (store.envelopes), then the requeue or dead-letter follows as a second step: a
 * crash between them leaves the rewritten message in flight, to come back as any held
 * delivery does.
 */

/** What of a broker's Delivery (broker.ts) a rewrite needs. */
interface Held {
  seq: number;
  token: string;
  released: number;
  system?: MessageAttributes;
}

/** What merging annotations changes: the 0-9-1 properties (their headers), the headers as plain values, the 1.0 sections. */
export interface ContentChange {
  properties: Buffer;
  headers?: Record<string, unknown>;
  amqp10?: Amqp10Sections;
}

async function rewrite(engine: EngineContext, queue: QueueRecord, changes: [Held, Envelope][]): Promise<void> {
  if (!changes.length) return;
  await engine.store.envelopes.rewrite(
    queue.id,
    changes.map(([d, env]) => ({ seq: d.seq, token: d.token, systemAttributes: envelopeAttributes(d.system, env) })),
  );
}

/** Counts the deliveries as released: one more each, kept in the envelope. */
export function countReleased(engine: EngineContext, queue: QueueRecord, deliveries: readonly Held[]): Promise<void> {
  return rewrite(
    engine,
    queue,
    deliveries.map((d) => {
      d.released++;
      return [d, { ...envelopeOf({ systemAttributes: d.system }, queue.name), released: d.released }];
    }),
  );
}

/** Merges what `change` makes of each delivery's content into its envelope (undefined: left as it is). */
export function mergeContent<D extends Held>(
  engine: EngineContext,
  queue: QueueRecord,
  deliveries: readonly D[],
  change: (d: D) => ContentChange | undefined,
): Promise<void> {
  const out: [Held, Envelope][] = [];
  for (const d of deliveries) {
    const c = change(d);
    if (!c) continue;
    const env = envelopeOf({ systemAttributes: d.system }, queue.name);
    const next: Envelope = { ...env, properties: c.properties.toString('base64'), headers: c.headers };
    if (c.amqp10) next.amqp10 = c.amqp10;
    out.push([d, next]);
  }
  return rewrite(engine, queue, out);
}

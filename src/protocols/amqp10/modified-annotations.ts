import type { Delivery } from '../../engine/amqp/broker.js';
import type { ContentChange } from '../../engine/amqp/held-rewrite.js';
import { plainTable, type FieldTable } from '../amqp/codec.js';
import { propertiesFromRaw, rawProperties } from '../amqp/properties.js';
import { fieldOf, isBrokerAnnotation } from './convert.js';
import { Amqp10Error } from './errors.js';
import { CODE, field, type Composite } from './frames.js';
import { MAX_MESSAGE_SIZE } from './incoming-link.js';
import { decodeMessage, encodeSections } from './message.js';
import { textOf, v, type Value } from './types.js';

/**
 * The message annotations of a `modified` outcome, merged into the message as RabbitMQ 4
 * merges them (docs/amqp.md, "Receiving"): keys are symbols starting `x-`, the others
 * are reserved by the spec, and RabbitMQ 4 ends the session over them; a key names an
 * annotation to add or replace. The broker's own (`x-exchange`, `x-routing-key`,
 * `x-opt-deaths`) are set on each delivery, so they are not kept, as a publisher's are not.
 */
export function modifiedAnnotations(state: Composite | undefined): Map<string, Value> | undefined {
  if (state?.code !== CODE.modified) return undefined;
  const given = field(state, 2);
  if (!given || given.type === 'null') return undefined;
  if (given.type !== 'map')
    throw new Amqp10Error(
      'amqp:decode-error',
      'the message-annotations of a modified outcome are not a map',
      'session',
    );
  const out = new Map<string, Value>();
  for (const [k, x] of given.value) {
    const key = k.type === 'symbol' ? k.value : undefined;
    if (key === undefined || !key.startsWith('x-'))
      throw new Amqp10Error(
        'amqp:invalid-field',
        `reserved annotation key ${JSON.stringify(textOf(k) ?? k.type).slice(0, 200)} in a modified outcome: keys start with x-`,
        'session',
      );
    if (!isBrokerAnnotation(key)) out.set(key, x);
  }
  return out.size ? out : undefined;
}

/**
 * The delivery's content with `annotations` merged: into its 1.0 message annotations when
 * it was published over 1.0, and into its 0-9-1 headers (the simple values: lists, maps
 * and arrays have no 0-9-1 form) for 0-9-1 consumers, the headers exchange of a
 * dead-lettering, and 1.0 receivers of a message published over 0-9-1 or SQS, which see
 * `x-` headers as annotations. Undefined when the result would be over the largest
 * message: the outcome then applies without the merge.
 */
export function annotatedContent(d: Delivery, annotations: ReadonlyMap<string, Value>): ContentChange | undefined {
  const c = d.content;
  const p = propertiesFromRaw(c.properties);
  const headers: FieldTable = new Map(p.headers);
  for (const [k, x] of annotations) {
    const f = Buffer.byteLength(k) < 256 ? fieldOf(x) : undefined;
    if (f) headers.set(k, f);
    else headers.delete(k);
  }
  p.headers = headers.size ? headers : undefined;
  const change: ContentChange = {
    properties: rawProperties(p),
    headers: headers.size ? plainTable(headers) : undefined,
  };
  let size = c.body.length + change.properties.length;
  if (c.amqp10) {
    const m = decodeMessage(Buffer.from(c.amqp10.sections, 'base64'));
    const merged = new Map<Value, Value>();
    for (const [k, x] of m.messageAnnotations?.value ?? []) if (!annotations.has(textOf(k) ?? '')) merged.set(k, x);
    for (const [k, x] of annotations) merged.set(v.symbol(k), x);
    const sections = encodeSections({ ...m, messageAnnotations: { type: 'map', value: merged } });
    change.amqp10 = { sections: sections.toString('base64'), body: c.amqp10.body };
    size = c.body.length + sections.length;
  }
  return size <= MAX_MESSAGE_SIZE ? change : undefined;
}

import type { AmqpContent } from '../../engine/amqp/messages.js';
import { firstDeathEntry } from '../../engine/dead-letters/deaths.js';
import type { Death } from '../../engine/kernel/types.js';
import { field, type FieldTable, type FieldValue } from './codec.js';
import { propertiesFromRaw, rawProperties, type Properties } from './properties.js';

/**
 * Headers that dead-lettering writes, and sender-selected distribution (CC and BCC).
 * The engine keeps a message's death history (deaths.ts) whichever protocol it died
 * through; x-death is built from it on each delivery, so a message dead-lettered over
 * SQS, or redriven back from an SQS queue, shows the same history to AMQP consumers.
 */

/** An x-death entry, with RabbitMQ's keys and types; its times are those of the first death for {queue, reason}. */
function deathTable(d: Death): FieldValue {
  const t: Record<string, FieldValue> = {
    count: field.long(d.count),
    exchange: field.str(d.exchange ?? ''),
    queue: field.str(d.queue),
    reason: field.str(d.reason),
    'routing-keys': field.array((d.routingKeys ?? [d.queue]).map(field.str)),
    time: field.timestamp(Math.floor(d.firstTime / 1000)),
  };
  if (d.originalExpiration !== undefined) t['original-expiration'] = field.str(d.originalExpiration);
  return field.table(t);
}

/**
 * The properties a dead-lettered message is delivered with: x-death (newest first),
 * x-first-death-* and x-last-death-* (as RabbitMQ 3.13 adds them), its expiration
 * removed, and its CC header removed when a dead-letter routing key replaced its keys.
 */
export function deliveredProperties(c: AmqpContent): Buffer {
  if (!c.deaths?.length) return c.properties;
  const p = propertiesFromRaw(c.properties);
  const h: FieldTable = new Map(p.headers ?? []);
  if (c.dropCc) h.delete('CC');
  const first = firstDeathEntry(c.deaths)!;
  const last = c.deaths[0]!;
  h.set('x-death', field.array(c.deaths.map(deathTable)));
  h.set('x-first-death-exchange', field.str(first.exchange ?? ''));
  h.set('x-first-death-queue', field.str(first.queue));
  h.set('x-first-death-reason', field.str(first.reason));
  h.set('x-last-death-exchange', field.str(last.exchange ?? ''));
  h.set('x-last-death-queue', field.str(last.queue));
  h.set('x-last-death-reason', field.str(last.reason));
  const out: Properties = { ...p, headers: h };
  delete out.expiration;
  return rawProperties(out);
}

/** The keys of a CC or BCC header: an array of strings, else none (RabbitMQ ignores other types). */
function keysOf(v: FieldValue | undefined): string[] | undefined {
  if (v?.type !== 'A') return undefined;
  const keys = v.value.filter((x) => x.type === 'S').map((x) => (x.value as Buffer).toString('utf8'));
  return keys.length ? keys : undefined;
}

/**
 * Sender-selected distribution: the CC and BCC keys of a publish, and its properties
 * with the BCC header removed (RabbitMQ removes it before anyone sees the message).
 */
export function senderSelected(
  raw: Buffer,
  headers: FieldTable | undefined,
): { cc?: string[]; bcc?: string[]; properties: Buffer } {
  const cc = keysOf(headers?.get('CC'));
  const bcc = keysOf(headers?.get('BCC'));
  if (!headers?.has('BCC')) return { cc, properties: raw };
  const p = propertiesFromRaw(raw);
  const h = new Map(headers);
  h.delete('BCC');
  return { cc, bcc, properties: rawProperties({ ...p, headers: h }) };
}

/**
 * RabbitMQ 4's address format v2. Targets: `/exchanges/:exchange/:routing-key`,
 * `/exchanges/:exchange` (the routing key is each message's subject, or empty), `/queues/:queue`
 * (the default exchange), or none (each message's `to` holds one of the others). Sources:
 * `/queues/:queue`. Each segment is percent-encoded.
 */
export type Address = { kind: 'exchange'; exchange: string; routingKey?: string } | { kind: 'queue'; queue: string };

/** Why an address is refused: RabbitMQ 4's `amqp:invalid-field` texts. */
export class AddressError extends Error {
  override readonly name = 'AddressError';
}

function segment(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    throw new AddressError(`bad percent-encoding in '${s}'`);
  }
}

export function parseAddress(address: string): Address {
  const parts = address.split('/');
  if (parts[0] !== '' || parts.length < 3) throw new AddressError(`bad address '${address}'`);
  if (parts[1] === 'queues' && parts.length === 3 && parts[2] !== '')
    return { kind: 'queue', queue: segment(parts[2]!) };
  if (parts[1] === 'exchanges' && (parts.length === 3 || parts.length === 4)) {
    const exchange = segment(parts[2]!);
    // The default exchange is addressed as a queue, as in RabbitMQ 4.
    if (exchange === 'amq.default' || exchange === '')
      throw new AddressError(`the default exchange is addressed as /queues/:queue, not '${address}'`);
    return parts.length === 4
      ? { kind: 'exchange', exchange, routingKey: segment(parts[3]!) }
      : { kind: 'exchange', exchange };
  }
  throw new AddressError(`bad address '${address}'`);
}

/** Where a message goes: exchange and routing key, for a link's target and the message's `to` and subject. */
export function routeOf(
  target: Address | undefined,
  to: string | undefined,
  subject: string | undefined,
): { exchange: string; routingKey: string } {
  const a = target ?? (to === undefined ? undefined : parseAddress(to));
  if (!a) throw new AddressError('a message without a to address sent to the null target');
  if (a.kind === 'queue') return { exchange: '', routingKey: a.queue };
  return { exchange: a.exchange, routingKey: a.routingKey ?? subject ?? '' };
}

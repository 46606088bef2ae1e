import { type BindingRecord, canonicalJson } from '../engine/store/exchanges.js';

/** An AMQP binding as both SQL stores keep it: the same columns, the same types. */
export interface BindingRow {
  account_id: string;
  source: string;
  destination_kind: 'queue' | 'exchange';
  destination: string;
  routing_key: string;
  arguments: string;
}

export const bindingOf = (r: BindingRow): BindingRecord => ({
  accountId: r.account_id,
  source: r.source,
  destinationKind: r.destination_kind,
  destination: r.destination,
  routingKey: r.routing_key,
  arguments: JSON.parse(r.arguments) as Record<string, unknown>,
});

/** A binding's identity, as the columns of the stores' unique key bind it. */
export const bindingKey = (b: BindingRecord) => [
  b.accountId,
  b.source,
  b.destinationKind,
  b.destination,
  b.routingKey,
  canonicalJson(b.arguments),
];

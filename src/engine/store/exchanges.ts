/**
 * AMQP's exchanges, bindings and the AMQP declaration of queues (docs/amqp.md). The
 * routing rules are the engine's (src/engine/amqp/routing.ts); a store only keeps the
 * records. Everything is scoped by account: an account is an AMQP virtual host `/`.
 */
export interface ExchangeRecord {
  accountId: string;
  name: string;
  /** `direct`, `fanout`, `topic` or `headers`. */
  type: string;
  durable: boolean;
  autoDelete: boolean;
  internal: boolean;
  arguments: Record<string, unknown>;
}

export interface BindingRecord {
  accountId: string;
  /** The exchange messages come from. */
  source: string;
  /** `queue`: a queue of the account by name; `exchange`: an exchange-to-exchange binding. */
  destinationKind: 'queue' | 'exchange';
  destination: string;
  routingKey: string;
  /** Binding arguments (the headers exchange's `x-match` and values). */
  arguments: Record<string, unknown>;
}

/** How a queue was declared over AMQP: flags and arguments as given (JSON values). */
export interface AmqpQueueRecord {
  queueId: number;
  durable: boolean;
  exclusive: boolean;
  autoDelete: boolean;
  arguments: Record<string, unknown>;
}

export interface ExchangeStore {
  /** Inserts the exchange unless one of that name exists; returns whichever is stored. */
  declare(exchange: ExchangeRecord): Promise<{ exchange: ExchangeRecord; created: boolean }>;
  get(accountId: string, name: string): Promise<ExchangeRecord | undefined>;
  /** Deletes the exchange and every binding from it or to it. */
  delete(accountId: string, name: string): Promise<boolean>;
  /** Adds the binding unless an identical one (same source, destination, key and arguments) exists; true if added. */
  bind(binding: BindingRecord): Promise<boolean>;
  /** Removes the identical binding; true if there was one. */
  unbind(binding: BindingRecord): Promise<boolean>;
  /** The account's exchanges in name order, at most `limit` (the management API's listing). */
  list(accountId: string, limit: number): Promise<ExchangeRecord[]>;
  /** The account's bindings from every source, in the order they were made, at most `limit`. */
  allBindings(accountId: string, limit: number): Promise<BindingRecord[]>;
  /** The bindings from `source`, in the order they were made. */
  bindings(accountId: string, source: string): Promise<BindingRecord[]>;
  /**
   * The exchanges bound to a queue or exchange, each once, in name order: what may be
   * auto-deleted when it goes. Read by the destination's index, not the account's bindings.
   */
  sourcesOf(accountId: string, kind: BindingRecord['destinationKind'], destination: string): Promise<string[]>;
  /** Removes every binding to a queue or exchange (when it is deleted); how many. */
  unbindDestination(accountId: string, kind: BindingRecord['destinationKind'], destination: string): Promise<number>;
  /** Records (or replaces) how a queue was declared. */
  setQueue(record: AmqpQueueRecord): Promise<void>;
  queue(queueId: number): Promise<AmqpQueueRecord | undefined>;
}

/** Arguments as stored: JSON with keys sorted, so equal arguments are equal text (binding identity). */
export function canonicalJson(value: unknown): string {
  const sort = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sort)
      : v && typeof v === 'object'
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, sort((v as Record<string, unknown>)[k])]),
          )
        : v;
  return JSON.stringify(sort(value ?? {}));
}

import type { AmqpEngine } from './amqp-engine.js';
import type { BindingRecord, ExchangeRecord } from '../store/exchanges.js';
import type { QueueRecord } from '../kernel/types.js';
import { BUILT_IN } from './exchanges.js';

/**
 * An account's AMQP topology as RabbitMQ lists it (the management API, the console's
 * Exchanges page): read only. The default exchange and the built-in `amq.*` ones come
 * first, as RabbitMQ has them in every virtual host, and every queue has its implicit
 * binding from the default exchange under its own name.
 */
function builtInExchanges(accountId: string): ExchangeRecord[] {
  const base = { accountId, durable: true, autoDelete: false, internal: false, arguments: {} };
  return [
    { ...base, name: '', type: 'direct' },
    ...Object.entries(BUILT_IN).map(([name, type]) => ({ ...base, name, type })),
  ];
}

/** The account's exchanges, built-in ones included, in name order, at most `limit`. */
export async function listExchanges(engine: AmqpEngine, accountId: string, limit: number): Promise<ExchangeRecord[]> {
  const declared = await engine.store.exchanges.list(accountId, limit);
  return [...builtInExchanges(accountId), ...declared]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .slice(0, limit);
}

/** The queues AMQP sees for an account: its queues in the server's default region (AMQP has no regions). */
export async function amqpQueues(engine: AmqpEngine, accountId: string): Promise<QueueRecord[]> {
  return (await engine.store.queues.all()).filter((q) => q.accountId === accountId && q.region === engine.region);
}

/**
 * The account's bindings: the default exchange's to each queue (in name order), then the
 * declared ones in the order they were made, at most `limit`.
 */
export async function listBindings(engine: AmqpEngine, accountId: string, limit: number): Promise<BindingRecord[]> {
  const queues = (await amqpQueues(engine, accountId)).map((q) => q.name).sort();
  const implicit = queues.slice(0, limit).map(
    (name): BindingRecord => ({
      accountId,
      source: '',
      destinationKind: 'queue',
      destination: name,
      routingKey: name,
      arguments: {},
    }),
  );
  const room = limit - implicit.length;
  return room > 0 ? [...implicit, ...(await engine.store.exchanges.allBindings(accountId, room))] : implicit;
}

import type { EngineContext } from '../context.js';
import type { QueueRecord } from '../types.js';
import { loadGraph } from './routing.js';

/**
 * The queues a queue's dead-letter exchange can deliver to, by name: every queue bound
 * to it (directly or through exchange-to-exchange bindings), or for the default
 * exchange the queue its dead-letter routing key names. These are its dead-letter
 * queues for ListDeadLetterSourceQueues, the console and StartMessageMoveTask, so an
 * AMQP dead letter can be redriven as an SQS one. Without a dead-letter routing key the
 * default exchange could reach any queue, and none is counted.
 */
export async function exchangeTargetNames(engine: EngineContext, queue: QueueRecord): Promise<string[]> {
  const s = engine.settingsOf(queue);
  const dlx = s.deadLetterExchange;
  if (dlx === undefined) return [];
  if (dlx === '') return s.deadLetterRoutingKey === undefined ? [] : [s.deadLetterRoutingKey];
  const graph = await loadGraph({
    exchange: (name) => engine.store.exchanges.get(queue.accountId, name),
    bindings: (source) => engine.store.exchanges.bindings(queue.accountId, source),
  }, dlx);
  const names = new Set<string>();
  for (const { bindings } of graph.exchanges.values()) for (const b of bindings) if (b.destinationKind === 'queue') names.add(b.destination);
  return [...names];
}

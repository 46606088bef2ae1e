import { randomUUID } from 'node:crypto';
import type { EngineContext } from '../context.js';
import { closesCycle, firstDeathEntry, recordDeath } from '../dead-letters/deaths.js';
import type { DeadLetterArrival, DeadLetterCopy, DeadLetterTarget } from '../store/dead-letters.js';
import type { QueueOwner } from '../store/queues.js';
import type { Death, DeathReason, QueueRecord, StoredMessage } from '../types.js';
import { envelopeAttributes, envelopeOf, type Envelope } from './messages.js';
import { loadGraph, routeIn, type RoutingGraph } from './routing.js';

/**
 * Dead-letter exchanges (RabbitMQ's x-dead-letter-exchange): a dead-lettered message is
 * published again to an exchange, with the queue's dead-letter routing key or its own
 * keys (CC and BCC included), and a copy reaches every queue that routes it. The store
 * moves messages inside one transaction and calls `arrival` there, so everything routing
 * reads (the exchanges reachable from the dead-letter exchange and the queues they can
 * reach) is read beforehand; the death history is recorded as for SQS queues (deaths.ts)
 * and becomes the x-death headers on delivery.
 */

/** Queues of the account in the region, read once for the default exchange as DLX, which can reach any of them. */
async function accountQueues(engine: EngineContext, owner: QueueOwner): Promise<QueueRecord[]> {
  const all: QueueRecord[] = [];
  for (let after: string | undefined; ;) {
    const page = await engine.store.queues.list(owner, '', after, 1000);
    all.push(...page);
    if (page.length < 1000) return all;
    after = page[page.length - 1]!.name;
  }
}

/** The queues routing may reach from `graph`: named by bindings, or by `keys` for the default exchange. */
async function reachableQueues(engine: EngineContext, owner: QueueOwner, graph: RoutingGraph, dlx: string, key: string | undefined): Promise<Map<string, QueueRecord>> {
  const names = new Set<string>();
  if (dlx === '') {
    if (key === undefined) return new Map((await accountQueues(engine, owner)).map((q) => [q.name, q]));
    names.add(key);
  }
  for (const { bindings } of graph.exchanges.values()) for (const b of bindings) if (b.destinationKind === 'queue') names.add(b.destination);
  const out = new Map<string, QueueRecord>();
  for (const name of names) {
    const q = await engine.store.queues.get({ ...owner, name });
    if (q && !q.fifo) out.set(name, q);
  }
  return out;
}

/** The headers routing sees: the message's, with the death headers the dead-lettering sets. */
function routingHeaders(env: Envelope, deaths: Death[]): Record<string, unknown> {
  const first = firstDeathEntry(deaths)!;
  return {
    ...env.h,
    'x-first-death-queue': first.queue, 'x-first-death-reason': first.reason, 'x-first-death-exchange': first.exchange ?? '',
    'x-last-death-queue': deaths[0]!.queue, 'x-last-death-reason': deaths[0]!.reason, 'x-last-death-exchange': env.x,
  };
}

/**
 * How messages of `queue` are dead-lettered through its dead-letter exchange for
 * `reason`. A missing exchange, or one that routes nowhere, drops the message, as
 * RabbitMQ does; a copy that would close a cycle with no rejection in it is dropped and
 * counted as a broken cycle.
 */
export async function exchangeDeadLetterTarget(engine: EngineContext, queue: QueueRecord, reason: DeathReason): Promise<DeadLetterTarget> {
  const s = engine.settingsOf(queue);
  const dlx = s.deadLetterExchange ?? '';
  const key = s.deadLetterRoutingKey;
  const graph = await loadGraph({
    exchange: (name) => engine.store.exchanges.get(queue.accountId, name),
    bindings: (source) => engine.store.exchanges.bindings(queue.accountId, source),
  }, dlx);
  // A dead letter stays in its queue's account and region, as SQS's dead-letter queues do.
  const queues = await reachableQueues(engine, { accountId: queue.accountId, region: queue.region }, graph, dlx, key);
  const sourceArn = engine.arnOf(queue);
  return {
    queueId: queue.id,
    reason,
    arrival: (m: StoredMessage): DeadLetterArrival => {
      const now = engine.clock.now();
      const env = envelopeOf(m, queue.name);
      const deaths = recordDeath(m.deaths, {
        queue: queue.name, queueArn: sourceArn, reason, time: now,
        exchange: env.x, routingKeys: [env.k, ...env.c ?? []], originalExpiration: env.e,
      });
      // With a dead-letter routing key the message's keys (and its CC header) are replaced.
      const keys = key === undefined ? [env.k, ...env.r ?? []] : [key];
      const next: Envelope = { ...env, x: dlx, k: keys[0]!, r: keys.length > 1 ? keys.slice(1) : undefined, e: undefined, n: m.receiveCount || undefined };
      if (key !== undefined) {
        next.c = undefined;
        next.d = 1;
      }
      const systemAttributes = envelopeAttributes(m.systemAttributes, next);
      const copies: DeadLetterCopy[] = [];
      let cyclesDropped = 0;
      for (const name of routeIn(graph, dlx, keys, routingHeaders(env, deaths))) {
        const dest = queues.get(name);
        if (!dest) continue;
        if (closesCycle(deaths, engine.arnOf(dest))) {
          cyclesDropped++;
          continue;
        }
        const ttl = engine.settingsOf(dest).messageTtlSeconds;
        copies.push({ queueId: dest.id, messageId: randomUUID(), systemAttributes, expiresAt: ttl === undefined ? undefined : now + ttl * 1000 });
      }
      return { sentAt: now, deadLetterSourceArn: sourceArn, deaths, copies, cyclesDropped };
    },
  };
}

import { randomUUID } from 'node:crypto';
import type { EngineContext } from '../context/engine-context.js';
import { expiryAfter, type DeadLetterSettings } from '../policies/dead-letter-settings.js';
import { closesCycle, firstDeathEntry, recordDeath } from './deaths.js';
import { queueArn } from '../kernel/addressing.js';
import type { DeadLetterCopies, DeadLetterCopy, DeadLetterTarget } from '../store/dead-letters.js';
import type { QueueOwner } from '../store/queues.js';
import type { Death, DeathReason, QueueRecord, StoredMessage } from '../kernel/types.js';
import { envelopeAttributes, envelopeOf, type Envelope } from '../routing/envelope.js';
import { loadGraph, routeIn, type RoutingGraph } from '../routing/routing.js';

/**
 * Dead-letter exchanges (RabbitMQ's x-dead-letter-exchange): a dead-lettered message is
 * published again to an exchange, with the queue's dead-letter routing key or its own
 * keys (CC and BCC included), and a copy reaches every queue that routes it. The store
 * moves messages inside one transaction and calls `arrival` there, so everything routing
 * reads (the exchanges reachable from the dead-letter exchange and the queues they can
 * reach) is read beforehand; the death history is recorded as for SQS queues (deaths.ts)
 * and becomes the x-death headers on delivery.
 */

/**
 * Dead-letter copies (beyond one per dead-lettering) one published message may lead to, through every dead-letter
 * exchange its copies pass (N queues with a TTL sharing a fanout dead-letter exchange
 * would otherwise make Σ (N−1)!/(N−1−k)! copies of one message). Past it a copy is not
 * made, and is logged and counted (`redrive_dead_letter_copies_dropped_total`).
 */
const DEAD_LETTER_COPIES = 1000;

/** The exchanges and bindings reachable from the queue's dead-letter exchange `dlx`. */
function dlxGraph(engine: EngineContext, queue: QueueRecord, dlx: string): Promise<RoutingGraph> {
  return loadGraph(
    {
      exchange: (name) => engine.store.exchanges.get(queue.accountId, name),
      bindings: (source) => engine.store.exchanges.bindings(queue.accountId, source),
    },
    dlx,
  );
}

/** The queues bound in `graph`, by name. */
function boundQueues(graph: RoutingGraph): Set<string> {
  const names = new Set<string>();
  for (const { bindings } of graph.exchanges.values())
    for (const b of bindings) if (b.destinationKind === 'queue') names.add(b.destination);
  return names;
}

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
  return [...boundQueues(await dlxGraph(engine, queue, dlx))];
}

/** Queues of the account in the region, read once for the default exchange as DLX, which can reach any of them. */
async function accountQueues(engine: EngineContext, owner: QueueOwner): Promise<QueueRecord[]> {
  const all: QueueRecord[] = [];
  for (let after: string | undefined; ; ) {
    const page = await engine.store.queues.list(owner, '', after, 1000);
    all.push(...page);
    if (page.length < 1000) return all;
    after = page[page.length - 1]!.name;
  }
}

/** The queues routing may reach from `graph`: named by bindings, or by `keys` for the default exchange. */
async function reachableQueues(
  engine: EngineContext,
  owner: QueueOwner,
  graph: RoutingGraph,
  dlx: string,
  key: string | undefined,
): Promise<Map<string, QueueRecord>> {
  const names = new Set<string>();
  if (dlx === '') {
    if (key === undefined) return new Map((await accountQueues(engine, owner)).map((q) => [q.name, q]));
    names.add(key);
  }
  for (const name of boundQueues(graph)) names.add(name);
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
    ...env.headers,
    'x-first-death-queue': first.queue,
    'x-first-death-reason': first.reason,
    'x-first-death-exchange': first.exchange ?? '',
    'x-last-death-queue': deaths[0]!.queue,
    'x-last-death-reason': deaths[0]!.reason,
    'x-last-death-exchange': env.exchange,
  };
}

/** A dead-letter exchange's target: every arrival is copies. */
export interface ExchangeTarget extends DeadLetterTarget {
  arrival(message: StoredMessage): DeadLetterCopies;
}

/**
 * How messages of `queue` are dead-lettered through its dead-letter exchange for
 * `reason`: each arrival is a copy in every queue the exchange routes the message to. A
 * missing exchange, or one that routes nowhere, drops the message, as RabbitMQ does; a
 * copy that would close a cycle with no rejection in it is not made and is counted as a
 * broken cycle.
 */
export async function exchangeTarget(
  engine: EngineContext,
  queue: QueueRecord,
  settings: DeadLetterSettings,
  reason: DeathReason,
): Promise<ExchangeTarget> {
  const dlx = settings.deadLetterExchange ?? '';
  const key = settings.deadLetterRoutingKey;
  const graph = await dlxGraph(engine, queue, dlx);
  // A dead letter stays in its queue's account and region, as SQS's dead-letter queues do.
  const queues = await reachableQueues(engine, { accountId: queue.accountId, region: queue.region }, graph, dlx, key);
  // Read of a destination when a message first routes to it: the default exchange reaches every queue of the account.
  const known = new Map<string, { queue: QueueRecord; arn: string; settings: DeadLetterSettings } | undefined>();
  const destination = (name: string) => {
    if (!known.has(name)) {
      const q = queues.get(name);
      known.set(name, q && { queue: q, arn: queueArn(q.region, q.accountId, q.name), settings: engine.settingsOf(q) });
    }
    return known.get(name);
  };
  const sourceArn = queueArn(queue.region, queue.accountId, queue.name);
  return {
    queueId: queue.id,
    reason,
    arrival: (m: StoredMessage): DeadLetterCopies => {
      const now = engine.clock.now();
      const env = envelopeOf(m, queue.name);
      const deaths = recordDeath(m.deaths, {
        queue: queue.name,
        queueArn: sourceArn,
        reason,
        time: now,
        exchange: env.exchange,
        routingKeys: [env.routingKey, ...(env.ccKeys ?? [])],
        originalExpiration: env.expiration,
      });
      // With a dead-letter routing key the message's keys (and its CC header) are replaced.
      const keys = key === undefined ? [env.routingKey, ...(env.moreRoutingKeys ?? [])] : [key];
      const next: Envelope = {
        ...env,
        exchange: dlx,
        routingKey: keys[0]!,
        moreRoutingKeys: keys.slice(1),
        expiration: undefined,
        receiveCountOnArrival: m.receiveCount,
      };
      if (key !== undefined) {
        next.ccKeys = undefined;
        next.dropCc = true;
      }
      const targets: { queue: QueueRecord; settings: DeadLetterSettings }[] = [];
      let cycles = 0;
      for (const name of routeIn(graph, dlx, keys, routingHeaders(env, deaths)).queues ?? []) {
        const dest = destination(name);
        if (!dest) continue;
        if (closesCycle(deaths, dest.arn)) cycles++;
        else targets.push(dest);
      }
      // One event's copies are bounded: each copy beyond the first spends one of the
      // message's budget, and what is left is shared out among the copies for the copies
      // they may make in turn (a message dead-lettered to one queue, as in a retry loop,
      // keeps its budget).
      const budget = env.copyBudget ?? DEAD_LETTER_COPIES;
      const made = targets.slice(0, budget + 1);
      next.copyBudget = made.length ? Math.floor((budget - (made.length - 1)) / made.length) : 0;
      const systemAttributes = envelopeAttributes(m.systemAttributes, next);
      const copies: DeadLetterCopy[] = made.map((dest) => ({
        queueId: dest.queue.id,
        messageId: randomUUID(),
        systemAttributes,
        expiresAt: expiryAfter(dest.settings, now),
      }));
      const overBudget = targets.length - made.length;
      return { kind: 'copies', sentAt: now, deadLetterSourceArn: sourceArn, deaths, copies, cycles, overBudget };
    },
  };
}

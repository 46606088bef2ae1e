import type { BindingRecord, ExchangeRecord } from '../store/exchanges.js';
import { amqpErrors } from '../kernel/amqp-errors.js';
import { TopicTrie, type StepBudget } from './topic-trie.js';

/**
 * AMQP routing: which queues an exchange sends a message to. Pure rules over exchange and
 * binding records, so publishing and dead-letter exchanges route the same way.
 */

export const EXCHANGE_TYPES = ['direct', 'fanout', 'topic', 'headers'] as const;

/** What routing reads of a message: its routing key and its headers as plain values. */
export interface RoutingInput {
  routingKey: string;
  headers?: Record<string, unknown>;
}

const sameValue = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The headers exchange: `x-match` is `all` (default), `any`, `all-with-x` or
 * `any-with-x`; other binding arguments must equal the message's headers. Arguments
 * starting with `x-` take part only in the `-with-x` modes, as in RabbitMQ. A binding
 * argument with no value (void) matches any value of a header that is present.
 */
function headersMatch(args: Record<string, unknown>, headers: Record<string, unknown> | undefined): boolean {
  const mode = typeof args['x-match'] === 'string' ? args['x-match'] : 'all';
  const withX = mode.endsWith('-with-x');
  const any = mode.startsWith('any');
  const pairs = Object.entries(args).filter(([k]) => k !== 'x-match' && (withX || !k.startsWith('x-')));
  const h = headers ?? {};
  const ok = ([k, v]: [string, unknown]) => Object.hasOwn(h, k) && (v === null || sameValue(h[k], v));
  if (any) return pairs.some(ok);
  return pairs.every(ok);
}

function bindingMatches(type: string, b: BindingRecord, msg: RoutingInput): boolean {
  switch (type) {
    case 'fanout':
      return true;
    case 'direct':
      return b.routingKey === msg.routingKey;
    case 'headers':
      return headersMatch(b.arguments, msg.headers);
    default:
      return false;
  }
}

export interface RoutingSource {
  exchange(name: string): Promise<ExchangeRecord | undefined>;
  bindings(source: string): Promise<BindingRecord[]>;
}

/** The exchanges reachable from one exchange, with their bindings: routing without the store. */
export interface RoutingGraph {
  exchanges: Map<string, GraphExchange>;
}

interface GraphExchange {
  exchange: ExchangeRecord;
  bindings: BindingRecord[];
  /** A topic exchange's binding keys, made when a message first routes through it. */
  trie?: TopicTrie;
}

/**
 * What routing one message may cost (docs/security.md): its keys (the routing key, CC and
 * BCC), the queues it reaches, and the steps of topic matching over all its keys and the
 * exchanges they pass; over any of them the message is refused (a publish) or dropped (a
 * dead letter), never routed in part.
 */
const ROUTING_LIMITS = {
  /** The routing key and the CC and BCC keys together. */
  keys: 64,
  /** Bytes of each CC or BCC key, as of a routing key (a short string). */
  keyBytes: 255,
  /** Queues one message is stored in. */
  routes: 1000,
  /** Topic trie nodes visited, all keys and exchanges together (a few milliseconds). */
  topicSteps: 100_000,
};

/** The queues a message routes to, or why it may not be routed. */
export type Routed = { queues: string[]; refused?: undefined } | { queues?: undefined; refused: string };

function stepBudget(max: number): StepBudget & { exhausted: boolean } {
  let left = max;
  return {
    exhausted: false,
    spend(steps) {
      left -= steps;
      if (left >= 0) return true;
      this.exhausted = true;
      return false;
    },
  };
}

/**
 * Reads every exchange reachable from `exchange` through exchange-to-exchange bindings,
 * whatever their keys, so that any message can then be routed without the store (a
 * dead-letter exchange routes inside a store transaction). An exchange is read once.
 */
export async function loadGraph(source: RoutingSource, exchange: string): Promise<RoutingGraph> {
  const graph: RoutingGraph = { exchanges: new Map() };
  const pending = exchange === '' ? [] : [exchange];
  const seen = new Set(pending);
  while (pending.length) {
    const name = pending.shift()!;
    const x = await source.exchange(name);
    if (!x) continue;
    const bindings = await source.bindings(name);
    graph.exchanges.set(name, { exchange: x, bindings });
    for (const b of bindings) {
      if (b.destinationKind === 'exchange' && !seen.has(b.destination)) {
        seen.add(b.destination);
        pending.push(b.destination);
      }
    }
  }
  return graph;
}

/**
 * The names of the queues a message published to `exchange` with these routing keys
 * (the key, then CC and BCC: sender-selected distribution) reaches, each once, in
 * binding order. Exchange-to-exchange bindings are followed; an exchange is visited once
 * per key, so a loop of bindings ends. The default exchange (``) routes to the queues
 * named by the keys. An exchange that does not exist routes nowhere.
 */
export function routeIn(
  graph: RoutingGraph,
  exchange: string,
  keys: string[],
  headers?: Record<string, unknown>,
): Routed {
  const distinct = [...new Set(keys)];
  if (distinct.length > ROUTING_LIMITS.keys)
    return {
      refused: `message with ${distinct.length} routing keys (CC and BCC included); at most ${ROUTING_LIMITS.keys}`,
    };
  const long = distinct.find((k) => Buffer.byteLength(k) > ROUTING_LIMITS.keyBytes);
  if (long !== undefined)
    return {
      refused: `routing key of ${Buffer.byteLength(long)} bytes (CC or BCC); at most ${ROUTING_LIMITS.keyBytes}`,
    };
  if (exchange === '') return { queues: distinct };
  const queues = new Set<string>();
  const budget = stepBudget(ROUTING_LIMITS.topicSteps);
  for (const routingKey of distinct) {
    const msg = { routingKey, headers };
    const visited = new Set<string>();
    const visit = (name: string): void => {
      if (visited.has(name) || budget.exhausted) return;
      visited.add(name);
      const node = graph.exchanges.get(name);
      if (node)
        for (const b of matching(node, msg, budget)) {
          if (b.destinationKind === 'queue') queues.add(b.destination);
          else visit(b.destination);
        }
    };
    visit(exchange);
    if (budget.exhausted)
      return { refused: `routing the message visits more than ${ROUTING_LIMITS.topicSteps} topic binding states` };
    if (queues.size > ROUTING_LIMITS.routes)
      return { refused: `message routed to more than ${ROUTING_LIMITS.routes} queues` };
  }
  return { queues: [...queues] };
}

/** The bindings of an exchange that a message matches, in binding order. */
function matching(node: GraphExchange, msg: RoutingInput, budget: StepBudget): BindingRecord[] {
  if (node.exchange.type !== 'topic') return node.bindings.filter((b) => bindingMatches(node.exchange.type, b, msg));
  node.trie ??= trieOf(node);
  return (node.trie.match(msg.routingKey, budget) ?? []).map((i) => node.bindings[i]!);
}

/**
 * Tries of topic exchanges by account and name, kept while their binding keys stay the
 * same: a publish reads its bindings afresh, and comparing their keys costs less than
 * building the trie again. The oldest go first once the kept tries hold more than
 * TRIE_PATTERNS binding keys together (each trie is at most bindings × 32 nodes).
 */
const tries = new Map<string, { patterns: string[]; trie: TopicTrie }>();
const TRIE_PATTERNS = 100_000;
let triePatterns = 0;

function trieOf({ exchange, bindings }: GraphExchange): TopicTrie {
  const id = `${exchange.accountId}\0${exchange.name}`;
  const known = tries.get(id);
  if (
    known &&
    known.patterns.length === bindings.length &&
    bindings.every((b, i) => b.routingKey === known.patterns[i])
  )
    return known.trie;
  const patterns = bindings.map((b) => b.routingKey);
  const trie = new TopicTrie(patterns);
  if (known) triePatterns -= known.patterns.length;
  tries.delete(id);
  tries.set(id, { patterns, trie });
  triePatterns += patterns.length;
  for (const [oldest, kept] of tries) {
    if (triePatterns <= TRIE_PATTERNS || oldest === id) break;
    tries.delete(oldest);
    triePatterns -= kept.patterns.length;
  }
  return trie;
}

/** routeIn, reading the exchanges reachable from `exchange` first; a message over a routing limit is refused with 406. */
export async function route(
  source: RoutingSource,
  exchange: string,
  msg: RoutingInput,
  extraKeys: string[] = [],
): Promise<string[]> {
  const r = routeIn(await loadGraph(source, exchange), exchange, [msg.routingKey, ...extraKeys], msg.headers);
  if (r.refused !== undefined) throw amqpErrors.precondition(r.refused);
  return r.queues;
}

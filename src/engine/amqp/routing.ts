import type { BindingRecord, ExchangeRecord } from '../store/exchanges.js';

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

/** Topic patterns: words split by `.`, `*` matches one word, `#` zero or more. */
function topicMatches(pattern: string, key: string): boolean {
  const p = pattern.split('.');
  const k = key.split('.');
  // Memoised on (i, j): a pattern with several `#` would otherwise be exponential.
  const seen = new Map<number, boolean>();
  const match = (i: number, j: number): boolean => {
    const id = i * (k.length + 1) + j;
    const hit = seen.get(id);
    if (hit !== undefined) return hit;
    let r: boolean;
    if (i === p.length) r = j === k.length;
    else if (p[i] === '#') r = match(i + 1, j) || (j < k.length && match(i, j + 1));
    else r = j < k.length && (p[i] === '*' || p[i] === k[j]) && match(i + 1, j + 1);
    seen.set(id, r);
    return r;
  };
  return match(0, 0);
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
    case 'topic':
      return topicMatches(b.routingKey, msg.routingKey);
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
  exchanges: Map<string, { exchange: ExchangeRecord; bindings: BindingRecord[] }>;
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
): string[] {
  if (exchange === '') return [...new Set(keys)];
  const queues = new Set<string>();
  for (const routingKey of keys) {
    const msg = { routingKey, headers };
    const visited = new Set<string>();
    const visit = (name: string): void => {
      if (visited.has(name)) return;
      visited.add(name);
      const node = graph.exchanges.get(name);
      if (!node) return;
      for (const b of node.bindings) {
        if (!bindingMatches(node.exchange.type, b, msg)) continue;
        if (b.destinationKind === 'queue') queues.add(b.destination);
        else visit(b.destination);
      }
    };
    visit(exchange);
  }
  return [...queues];
}

/** routeIn, reading the exchanges reachable from `exchange` first. */
export async function route(
  source: RoutingSource,
  exchange: string,
  msg: RoutingInput,
  extraKeys: string[] = [],
): Promise<string[]> {
  return routeIn(await loadGraph(source, exchange), exchange, [msg.routingKey, ...extraKeys], msg.headers);
}

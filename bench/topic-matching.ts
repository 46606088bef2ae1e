import { routeIn, type RoutingGraph } from '../src/engine/routing/routing.js';
import type { BindingRecord } from '../src/engine/store/exchanges.js';
import { topicMatches } from '../test/support/topic-definition.js';

/**
 * Topic routing of one publish, before and after the topic trie: "before" matches each
 * binding with the memoised definition (as routing did), "after" is routeIn, which builds
 * the exchange's trie on the publish's first key (a publish reads its bindings afresh, so
 * the trie is built each time too). Runs alternate (A/B interleaved) and the median of
 * each is printed, in microseconds per publish:
 *   node dist/bench/topic-matching.js [rounds=7]
 * docs/performance.md quotes it.
 */
interface Case {
  name: string;
  patterns: string[];
  keys: string[];
}

const words = (w: string, n: number) => Array.from({ length: n }, () => w).join('.');

const CASES: Case[] = [
  {
    name: '3 bindings, 1 key (logs.*.error)',
    patterns: ['logs.*.error', 'logs.#', 'audit.#'],
    keys: ['logs.web.error'],
  },
  {
    name: '100 bindings, 1 key',
    patterns: Array.from({ length: 100 }, (_, i) => (i % 3 ? `svc${i}.*.event` : `svc${i}.#`)),
    keys: ['svc42.orders.event'],
  },
  {
    name: '10 bindings, key + 4 CC keys',
    patterns: Array.from({ length: 10 }, (_, i) => `region.${i}.*.#`),
    keys: ['region.1.a.b', 'region.2.a', 'region.3.x.y.z', 'other.1', 'region.9.q'],
  },
  {
    name: 'hostile: 10 × `#.a` ×16, 128-word key + 3 CC',
    patterns: Array.from({ length: 10 }, (_, i) => `${'#.a.'.repeat(15)}#.q${i}`),
    keys: Array.from({ length: 4 }, (_, i) => `${words('a', 126)}.${i}`),
  },
];

function graphOf(c: Case): RoutingGraph {
  const bindings: BindingRecord[] = c.patterns.map((p, i) => ({
    accountId: '1',
    source: 'x',
    destinationKind: 'queue',
    destination: `q${i}`,
    routingKey: p,
    arguments: {},
  }));
  const exchange = {
    accountId: '1',
    name: 'x',
    type: 'topic',
    durable: true,
    autoDelete: false,
    internal: false,
    arguments: {},
  };
  return { exchanges: new Map([['x', { exchange, bindings }]]) };
}

function before(c: Case): number {
  const queues = new Set<string>();
  const bindings = graphOf(c).exchanges.get('x')!.bindings;
  for (const key of c.keys) for (const b of bindings) if (topicMatches(b.routingKey, key)) queues.add(b.destination);
  return queues.size;
}

function after(c: Case): number {
  return routeIn(graphOf(c), 'x', c.keys).queues?.length ?? -1;
}

/** Microseconds per call of `f` over at least 200 ms. */
function measure(f: (c: Case) => number, c: Case): number {
  let n = 0;
  const started = performance.now();
  while (performance.now() - started < 200) {
    for (let i = 0; i < 10; i++) f(c);
    n += 10;
  }
  return ((performance.now() - started) * 1000) / n;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const rounds = Number(process.argv[2] ?? 7);
console.log('| case | before (µs/publish) | after (µs/publish) |');
console.log('|---|---|---|');
for (const c of CASES) {
  const a: number[] = [];
  const b: number[] = [];
  for (let r = 0; r < rounds; r++) {
    a.push(measure(before, c));
    b.push(measure(after, c));
  }
  console.log(`| ${c.name} | ${median(a).toFixed(1)} | ${median(b).toFixed(1)} |`);
}

/**
 * Connection limits, with two real server processes on a PostgreSQL of the test's own
 * with a small max_connections: under load each node's pool stays within its pool_size;
 * when the database has no connection left for a node, the node answers a clean
 * ServiceUnavailable naming the reason, and it recovers once connections free up.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { FaultLoad } from '../support/fault-load.js';
import { assertReport, assertUnavailable, recovery, twoNodes } from '../support/fault-nodes.js';
import { startOwnPostgres, type OwnPostgres } from '../support/own-postgres.js';
import type { ServerProcess } from '../support/server-process.js';

const POOL = 3;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

let own: OwnPostgres;
const nodes: ServerProcess[] = [];
const hogs: pg.Client[] = [];
before(async () => {
  // Room for the two nodes (pool + 1 LISTEN each), the test's own client and a few more.
  own = await startOwnPostgres({ max_connections: '14', superuser_reserved_connections: '0' });
});
after(async () => {
  FaultLoad.stopAll();
  await Promise.all(hogs.map((h) => h.end().catch(() => undefined)));
  await Promise.all(nodes.map((n) => (n.proc.exitCode === null && n.proc.signalCode === null ? n.stop() : undefined)));
  nodes.forEach((n) => n.cleanup());
  own?.destroy();
});

/** A gauge of the node's /metrics (summed over its series). */
async function gauge(node: ServerProcess, name: string): Promise<number> {
  const text = await (await fetch(`${node.url}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

/** Opens connections until the database refuses one; returns how many it accepted. */
async function exhaust(): Promise<number> {
  for (let opened = 0; ; opened++) {
    const c = new pg.Client({ connectionString: own.url('limits'), connectionTimeoutMillis: 5000 });
    c.on('error', () => undefined);
    try {
      await c.connect();
    } catch (e) {
      assert.equal((e as { code?: string }).code, '53300', 'refused for too many connections');
      return opened;
    }
    hogs.push(c);
  }
}

/**
 * The client backends that are not this test's own: the nodes'. Counted by pid rather than
 * by the nodes' application_name, which a connection still starting up does not show yet.
 */
async function nodeBackends(watcher: pg.Client): Promise<number> {
  // pg sets processID from the server's BackendKeyData; @types/pg leaves it out.
  const ours = hogs.map((h) => (h as unknown as { processID: number }).processID);
  const { rows } = await watcher.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'client backend' AND NOT (pid = ANY($1))",
    [ours],
  );
  return rows[0]!.n;
}

/**
 * Ends the nodes' connections and takes the slots they held, until the nodes hold none: a
 * terminated backend frees its slot only once it has exited, and a node may reconnect (its
 * pool, its LISTEN connection, its fallback poll) before the slot is taken, or be connecting
 * as the last slot goes: so the count must stay at none for a moment too.
 */
async function takeTheNodesSlots(watcher: pg.Client): Promise<number> {
  let opened = 0;
  for (let round = 0; round < 20; round++) {
    await watcher.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'redrive'");
    for (const until = Date.now() + 3000; Date.now() < until && (await nodeBackends(watcher)) > 0; ) await pause(20);
    opened += await exhaust();
    if ((await nodeBackends(watcher)) > 0) continue;
    await pause(300);
    if ((await nodeBackends(watcher)) === 0) return opened;
  }
  throw new Error('the nodes kept a connection through 20 rounds of ending them');
}

test('each pool stays within pool_size; a node that cannot connect answers 503 with the reason and recovers', {
  timeout: 300_000,
}, async (t) => {
  const pair = await twoNodes(own, 'limits', `pool_size=${POOL}&connect_timeout_ms=1500&query_timeout_ms=1500`, nodes);
  const watcher = new pg.Client({ connectionString: own.url('limits') });
  await watcher.connect();
  hogs.push(watcher);

  // Six requesters on each node (two loads of three), on pools of three.
  const load = new FaultLoad(pair, 'q');
  const extra = new FaultLoad(pair, 'idle');
  let most = { backends: 0, pools: [0, 0], waiting: 0 };
  for (const until = Date.now() + 3000; Date.now() < until; ) {
    const { rows } = await watcher.query<{ n: string }>(
      "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = 'limits' AND application_name = 'redrive'",
    );
    const pools = await Promise.all(pair.map((n) => gauge(n, 'redrive_postgres_pool_connections')));
    const waiting = (await Promise.all(pair.map((n) => gauge(n, 'redrive_postgres_pool_waiting_requests')))).reduce(
      (a, b) => a + b,
      0,
    );
    most = {
      backends: Math.max(most.backends, Number(rows[0]!.n)),
      pools: pools.map((p, i) => Math.max(p, most.pools[i]!)),
      waiting: Math.max(most.waiting, waiting),
    };
    await pause(100);
  }
  t.diagnostic(
    `most seen: ${most.backends} backends of the nodes, pools ${most.pools.join(' and ')} of ${POOL}, ${most.waiting} requests waiting for a connection`,
  );
  for (const p of most.pools) assert.ok(p <= POOL, `a pool holds at most pool_size connections (${p})`);
  assert.ok(
    most.backends <= pair.length * (POOL + 1),
    `the nodes hold at most nodes × (pool_size + 1) backends (${most.backends})`,
  );
  assertReport(t, await load.finish(3000), pair);
  await extra.finish(0, 0);

  // Every slot taken: the nodes' connections are ended and the slots they held are taken too.
  const before = await exhaust();
  const afterEnd = await takeTheNodesSlots(watcher);
  t.diagnostic(`${before + afterEnd + 1} connections hold all ${14} slots`);
  await assertUnavailable(t, pair, /the database server has too many connections \(53300\)/);
  for (const node of pair) assert.equal(node.proc.exitCode, null, 'no node exited');

  await Promise.all(hogs.splice(0).map((h) => h.end()));
  const ms = await recovery(pair);
  t.diagnostic(`both nodes answered again ${ms} ms after connections were freed`);
});

import assert from 'node:assert/strict';
import { CreateQueueCommand, SendMessageCommand, type SQSServiceException } from '@aws-sdk/client-sqs';
import type { TestContext } from 'node:test';
import pg from 'pg';
import { ENOUGH_ACKNOWLEDGED, type LoadReport } from './fault-load.js';
import type { OwnPostgres } from './own-postgres.js';
import { startServerProcess, type ServerProcess } from './server-process.js';

/** What the database-fault tests (test/postgres/db-faults.test.ts, connection-limits.test.ts) share. */

const ACCOUNT = '000000000000';
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A database of its own for one test and two nodes on it (also pushed to `started`, for
 * the file's cleanup), with queues `q` (visibility timeout 2 s), `probe` and `idle`.
 */
export async function twoNodes(
  own: OwnPostgres,
  db: string,
  params: string,
  started: ServerProcess[],
): Promise<ServerProcess[]> {
  const admin = new pg.Client({ connectionString: own.url() });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${db}`);
  await admin.end();
  // Every node that started goes to `started`, even when the other did not, so the file's
  // cleanup stops it.
  const starts = await Promise.allSettled(
    [0, 1].map(() => startServerProcess({ storage: `${own.url(db)}?${params}` })),
  );
  for (const s of starts) if (s.status === 'fulfilled') started.push(s.value);
  const failed = starts.find((s) => s.status === 'rejected');
  if (failed) throw failed.reason;
  const pair = starts.map((s) => (s as PromiseFulfilledResult<ServerProcess>).value);
  await pair[0]!.client().send(new CreateQueueCommand({ QueueName: 'q', Attributes: { VisibilityTimeout: '2' } }));
  await pair[0]!.client().send(new CreateQueueCommand({ QueueName: 'probe' }));
  await pair[0]!.client().send(new CreateQueueCommand({ QueueName: 'idle' }));
  return pair;
}

/** A send through the node, and its /ready: what a client and a load balancer see. */
export async function probe(node: ServerProcess): Promise<{ send: string; ready: number; reason: string }> {
  let send = 'ok';
  try {
    await node.client().send(new SendMessageCommand({ QueueUrl: `${node.url}/${ACCOUNT}/probe`, MessageBody: 'x' }));
  } catch (e) {
    const err = e as SQSServiceException;
    send = `${err.$metadata?.httpStatusCode} ${err.name}: ${err.message}`;
  }
  const res = await fetch(`${node.url}/ready`);
  return { send, ready: res.status, reason: ((await res.json()) as { reason?: string }).reason ?? '' };
}

/** Asserts every node answers a clean 503 ServiceUnavailable and /ready 503. */
export async function assertUnavailable(t: TestContext, pair: ServerProcess[], what: RegExp): Promise<void> {
  for (const [i, node] of pair.entries()) {
    const p = await probe(node);
    t.diagnostic(`node ${i} while ${what.source}: send ${p.send}; /ready ${p.ready} ${p.reason}`);
    assert.match(p.send, /^503 ServiceUnavailable: Storage unavailable: /);
    assert.match(p.send, what);
    assert.equal(p.ready, 503);
    assert.match(p.reason, /Storage unavailable|database/);
  }
}

/**
 * How long a node may take to answer again once the database is back. What the tests prove
 * is that a node recovers on its own (a wedged pool never would); how fast depends on the
 * machine: a loaded 2-core CI machine, running other test files beside these, took more
 * than 10 s once where a quiet one takes under 1 s. The time is printed as a diagnostic.
 */
const RECOVERY_LIMIT_MS = 30_000;

/** Waits until every node's send succeeds and /ready is 200; returns the time taken. */
export async function recovery(pair: ServerProcess[], limitMs = RECOVERY_LIMIT_MS): Promise<number> {
  const since = Date.now();
  for (const node of pair) {
    for (;;) {
      const p = await probe(node);
      if (p.send === 'ok' && p.ready === 200) break;
      if (Date.now() - since >= limitMs)
        assert.fail(
          `node recovers within ${limitMs} ms (last: ${p.send}, /ready ${p.ready}; ${await poolState(node)})`,
        );
      await pause(100);
    }
  }
  return Date.now() - since;
}

/** The node's PostgreSQL pool as its /metrics gives it, for a failure's message. */
async function poolState(node: ServerProcess): Promise<string> {
  const text = await (await fetch(`${node.url}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith('redrive_postgres_pool_'))
    .join(', ');
}

export function assertReport(t: TestContext, r: LoadReport, pair: ServerProcess[]): void {
  t.diagnostic(
    `sent ${r.sent}, acknowledged ${r.acknowledged}, received ${r.received}, lost ${r.lost}, duplicated ${r.duplicated}, deleted then returned ${r.deletedReturned}; errors ${JSON.stringify(r.errors)}`,
  );
  assert.ok(r.acknowledged >= ENOUGH_ACKNOWLEDGED, 'the load ran');
  assert.equal(r.lost, 0, 'no acknowledged message was lost');
  assert.equal(r.deletedReturned, 0, 'no deleted message came back');
  for (const key of Object.keys(r.errors))
    assert.equal(key, '503 ServiceUnavailable', 'every failure was a clean ServiceUnavailable');
  for (const node of pair) assert.equal(node.proc.exitCode, null, 'no node exited');
}

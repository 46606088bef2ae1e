/**
 * The database's faults under load, with two real server processes on a PostgreSQL of
 * the test's own (own-postgres.ts): a restart, a crash and a stall. While the database is
 * gone every node answers a clean ServiceUnavailable and /ready says 503; once it is back
 * every node recovers on its own; no acknowledged message is lost and no deleted message
 * comes back.
 */
import assert from 'node:assert/strict';
import { ReceiveMessageCommand, type SQSServiceException } from '@aws-sdk/client-sqs';
import { after, before, test } from 'node:test';
import { FaultLoad } from '../support/fault-load.js';
import { assertReport, assertUnavailable, recovery, twoNodes } from '../support/fault-nodes.js';
import { startOwnPostgres, type OwnPostgres } from '../support/own-postgres.js';
import type { ServerProcess } from '../support/server-process.js';

const ACCOUNT = '000000000000';
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Short timeouts, so a stalled database fails requests within seconds. */
const PARAMS = 'pool_size=4&connect_timeout_ms=1500&query_timeout_ms=1500';

let own: OwnPostgres;
const nodes: ServerProcess[] = [];
before(async () => {
  own = await startOwnPostgres();
});
after(async () => {
  FaultLoad.stopAll();
  await Promise.all(nodes.map((n) => (n.proc.exitCode === null && n.proc.signalCode === null ? n.stop() : undefined)));
  nodes.forEach((n) => n.cleanup());
  own?.destroy();
});

for (const [mode, down] of [
  ['fast shutdown', () => own.stop()],
  ['crash (pg_ctl stop -m immediate)', () => own.crash()],
] as const) {
  test(`PostgreSQL ${mode} and start under load`, { timeout: 300_000 }, async (t) => {
    const pair = await twoNodes(own, mode.startsWith('fast') ? 'restart' : 'crash', PARAMS, nodes);
    const load = new FaultLoad(pair, 'q');
    await pause(1500);
    down();
    await pause(300);
    await assertUnavailable(
      t,
      pair,
      /database server cannot be reached|connection to the database server failed|shutting down/,
    );
    await pause(1000);
    own.start();
    const ms = await recovery(pair);
    t.diagnostic(`both nodes answered again ${ms} ms after the database started`);
    await pause(1500);
    assertReport(t, await load.finish(3000), pair);
  });
}

test('a stalled database (SIGSTOP for 10 s): requests fail cleanly, long polls end, nothing hangs after SIGCONT', {
  timeout: 300_000,
}, async (t) => {
  const pair = await twoNodes(own, 'stall', PARAMS, nodes);
  const load = new FaultLoad(pair, 'q');
  await pause(1500);
  // Long polls on an empty queue, under way when the database stalls: each ends at its
  // wait time, empty (a re-check that times out counts as nothing found), or, on a machine
  // slow enough that the poll's first read of the queue meets the stall, with a clean 503;
  // either way well before the stall ends.
  const polls = pair.map(async (node) => {
    const start = Date.now();
    try {
      const out = await node
        .client()
        .send(new ReceiveMessageCommand({ QueueUrl: `${node.url}/${ACCOUNT}/idle`, WaitTimeSeconds: 3 }));
      return { ms: Date.now() - start, outcome: `${out.Messages?.length ?? 0} messages` };
    } catch (e) {
      const err = e as SQSServiceException;
      return { ms: Date.now() - start, outcome: `${err.$metadata?.httpStatusCode} ${err.name}` };
    }
  });
  await pause(300);
  own.pause();
  const stalledAt = Date.now();
  try {
    await pause(500);
    await assertUnavailable(
      t,
      pair,
      /did not answer within query_timeout_ms|no database connection within connect_timeout_ms/,
    );
    for (const p of await Promise.all(polls)) {
      t.diagnostic(`long poll during the stall: ${p.outcome} after ${p.ms} ms`);
      assert.match(p.outcome, /^(0 messages|503 ServiceUnavailable)$/);
      assert.ok(p.ms < 9000, 'the long poll ended by its wait time and one re-check, not when the 10 s stall ended');
    }
    await pause(Math.max(0, 10_000 - (Date.now() - stalledAt)));
  } finally {
    own.resume();
  }
  const ms = await recovery(pair);
  t.diagnostic(`both nodes answered again ${ms} ms after SIGCONT`);
  await pause(1500);
  assertReport(t, await load.finish(3000), pair);
});

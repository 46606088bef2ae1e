import { performance } from 'node:perf_hooks';
import { loops } from './http-load.js';
import type { LoadSpec } from './protocol.js';
import { countRoundTrips } from './round-trips.js';
import { stampedBody, stampOf, type Window } from './window.js';

/**
 * The PostgreSQL baseline: pg-boss (a devDependency) doing W3's work on its own database,
 * in this shape: `producers` loops each sending one job at a time, and
 * `consumers` loops each fetching up to ten jobs and completing them in one call. pg-boss
 * has no long poll: a consumer whose fetch came back empty waits 10 ms before the next,
 * so an empty queue does not turn into a busy loop against the database. Every option is
 * pg-boss's default (a pool of 10 connections, like Redrive's).
 *
 * pg-boss 12 declares Node >= 22.12, but its send, fetch and complete run on the Node 20
 * of this machine (checked before it was added here), so it runs in the load child as is.
 */
export async function runPgBoss(spec: LoadSpec, w: Window): Promise<void> {
  const roundTrips = countRoundTrips();
  const { PgBoss } = await import('pg-boss');
  const boss = new PgBoss({ connectionString: spec.target });
  boss.on('error', (e: unknown) => w.error(e));
  await boss.start();
  try {
    await boss.createQueue(spec.queue);
    let atStart = 0;
    void w.opened.then(() => (atStart = roundTrips()));
    const produce = loops(spec.producers, w, async () => {
      await boss.send(spec.queue, { body: stampedBody(spec.bodyBytes) });
      w.count(1);
    });
    const consume = loops(spec.consumers, w, async () => {
      const jobs = await boss.fetch<{ body: string }>(spec.queue, { batchSize: 10 });
      w.count(0);
      w.received(jobs.length);
      if (jobs.length === 0) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        return;
      }
      const now = performance.now();
      for (const j of jobs) w.latency(now - stampOf(j.data.body));
      await boss.complete(
        spec.queue,
        jobs.map((j) => j.id),
      );
      w.count(0, jobs.length);
    });
    await w.closed;
    w.roundTrips = roundTrips() - atStart;
    await Promise.all([produce, consume]);
  } finally {
    await boss.stop({ graceful: false }).catch(() => undefined);
  }
}

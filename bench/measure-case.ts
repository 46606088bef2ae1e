import type { Case } from './cases.js';
import { config } from './config.js';
import { measure, type Measurement } from './measure.js';
import type { Target } from './targets.js';

/**
 * Measures one case against a target started for it, then stops the target: the load the
 * case describes, the server's processes (and, on PostgreSQL, the database's) as the
 * CPU counted. Shared by the benchmark (run.ts) and the A/B (ab.ts), so both measure alike.
 */
export async function measureCase(c: Case, target: Target, rate?: number): Promise<Measurement> {
  try {
    return await measure(
      {
        kind: c.kind,
        target: target.url,
        targets: target.urls,
        queue: target.queue,
        producers: c.producers,
        consumers: c.consumers,
        bodyBytes: config.bodyBytes,
        warmupSeconds: config.warmupSeconds,
        seconds: config.seconds,
        rate,
        groups: c.groups,
        queueType: c.queueType,
        crossNodes: c.crossNodes,
      },
      c.metric,
      {
        serverPids: target.pids,
        database: target.database,
        roundTripPids: target.database ? target.pids : undefined,
        walIndex: target.walIndex,
      },
    );
  } finally {
    await target.stop();
  }
}

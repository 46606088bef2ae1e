import { appendFileSync } from 'node:fs';
import { subscribe } from 'node:diagnostics_channel';
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';

/**
 * Garbage collection per HTTP request, a figure the machine's noise hardly moves (the
 * allocation rate does not depend on who else has the CPU). Load it into the server and
 * read the line it appends at exit to BENCH_GC_OUT (default /tmp/redrive-gc.log):
 *   BENCH_SERVER_NODE_ARGS="--import ./dist/bench/gc-count.js" BENCH_ONLY=W1 BENCH_RUNS=1 node dist/bench/run.js
 * Add BENCH_SERVER_DIST=<dist> to count another build. docs/performance.md quotes it.
 */
if (isMainThread) {
  let requests = 0;
  let minor = 0;
  let other = 0;
  let ms = 0;
  subscribe('http.server.request.start', () => requests++);
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      ms += e.duration;
      const { detail } = e as PerformanceEntry & { detail?: { kind?: number } };
      if (detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) minor++;
      else other++;
    }
  }).observe({ entryTypes: ['gc'] });
  process.on('exit', () => {
    const per = (n: number) => (requests ? n / requests : 0);
    appendFileSync(
      process.env.BENCH_GC_OUT ?? '/tmp/redrive-gc.log',
      `${process.argv[1]} requests ${requests}: young-generation GCs per 1,000 ${(1000 * per(minor)).toFixed(2)}, others ${other}, GC µs per request ${(1000 * per(ms)).toFixed(2)}\n`,
    );
  });
}

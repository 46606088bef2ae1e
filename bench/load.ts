import { runCycle, runDrain, runPreload, runSends } from './http-load.js';
import type { ChildMessage, LoadSpec } from './protocol.js';
import { runPgBoss } from './pgboss-load.js';
import { runRabbit } from './rabbit-load.js';
import { Window } from './window.js';
import { runWrk } from './wrk-load.js';

/**
 * A load child: run.ts forks one per run, so the client's CPU never competes with the
 * orchestrator's and its own usage can be measured apart. It takes one LoadSpec over
 * IPC, runs it, reports one result, and exits.
 */
const send = (msg: ChildMessage): Promise<void> =>
  new Promise((resolve) => process.send!(msg, undefined, undefined, () => resolve()));

// If the orchestrator dies, this child must not go on loading the machine.
process.on('disconnect', () => process.exit(1));

process.once('message', async (spec: LoadSpec) => {
  try {
    const w = new Window(spec.warmupSeconds, spec.seconds, (event) => void send({ type: event }));
    if (spec.kind === 'send' || spec.kind === 'batch') await runSends(spec, w);
    else if (spec.kind === 'send-wrk') await runWrk(spec, w);
    else if (spec.kind === 'cycle' || spec.kind === 'cycle-batch' || spec.kind === 'fifo-cycle')
      await runCycle(spec, w);
    else if (spec.kind === 'preload') await runPreload(spec, w);
    else if (spec.kind === 'drain') await runDrain(spec, w);
    else if (spec.kind === 'pgboss-cycle') await runPgBoss(spec, w);
    else await runRabbit(spec, w);
    await send({ type: 'result', result: w.result() });
    process.exit(0);
  } catch (e) {
    await send({ type: 'error', message: e instanceof Error ? (e.stack ?? e.message) : String(e) });
    process.exit(1);
  }
});

import type { RunningServer } from '../server/app.js';
import { DRAIN_MS } from '../server/app.js';

/** Past the drain, how long closing the store may take before the process exits anyway. */
const CLOSE_GRACE_MS = 1_500;

/**
 * SIGTERM and SIGINT stop the server: it stops accepting, answers waiting long polls,
 * lets requests in flight finish for up to DRAIN_MS, closes the store and exits 0.
 * Whatever happens to stdout and stderr (a reader that went away makes every write
 * fail with EPIPE), the process exits: write errors are ignored, and should stopping
 * hang it exits 1 after the drain and a grace period. A second signal exits at once.
 */
export function stopOnSignals(server: RunningServer): void {
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => {});
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      server.log.warn({ signal }, 'second signal: exiting without waiting');
      process.exit(1);
    }
    stopping = true;
    const watchdog = setTimeout(() => {
      server.log.error({ afterMs: DRAIN_MS + CLOSE_GRACE_MS }, 'shutdown did not finish in time: exiting');
      process.exit(1);
    }, DRAIN_MS + CLOSE_GRACE_MS);
    watchdog.unref();
    server.stop().then(
      () => process.exit(0),
      (err) => {
        server.log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

import { after, before, describe, it } from 'node:test';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { needs, type SkipGroup } from '../support/requirements.js';
import type { Driver } from './drivers.js';
import { scenarios } from './scenarios.js';

/** Runs the shared scenarios through one client against a fresh server of its own. */
export function runScenarios(
  title: string,
  makeDriver: (url: string) => Promise<Driver> | Driver,
  opts: { check?: (d: Driver, url: string) => void | Promise<void>; concurrency?: number; needs?: SkipGroup } = {},
): void {
  const { skip } = opts.needs ? needs(opts.needs) : {};
  if (skip) {
    describe(title, () => {
      for (const s of scenarios) it(s.name, { skip }, () => undefined);
    });
    return;
  }
  // Scenarios use distinct queues, so a slow client may run them side by side.
  describe(title, { concurrency: opts.concurrency ?? 1 }, () => {
    let server: ServerProcess;
    let driver: Driver;
    before(async () => {
      server = await startServerProcess({ storage: 'memory' });
      driver = await makeDriver(server.url);
      await opts.check?.(driver, server.url);
    });
    after(async () => {
      await driver?.close();
      await server?.stop();
      server?.cleanup();
    });
    for (const s of scenarios) it(s.name, () => s.run(driver));
  });
}

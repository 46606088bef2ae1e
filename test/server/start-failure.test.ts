import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startServer } from '../../src/server/app.js';
import { defaults, serverLog } from '../../src/server/server-config.js';

test('a start that fails after the store, the engine and the HTTP port are open closes them all', async () => {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const dataDir = mkdtempSync(join(tmpdir(), 'redrive-start-failure-'));
  const config = { ...defaults, storage: 'sqlite', dataDir, port: 0, logLevel: 'silent' };
  try {
    // The metrics listener opens last: its port is taken.
    await assert.rejects(
      startServer(
        { ...config, metricsAddress: `127.0.0.1:${(taken.address() as AddressInfo).port}` },
        serverLog('silent'),
      ),
      { code: 'EADDRINUSE' },
    );
    // The data directory's lock went with the store: a server starts on it at once.
    const again = await startServer(config, serverLog('silent'));
    await again.stop();
  } finally {
    taken.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

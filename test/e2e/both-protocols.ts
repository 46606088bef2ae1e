import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApiError, boto3Driver, jsonSdkDriver, type Driver } from '../query/drivers.js';
import { needs } from '../support/requirements.js';
import { useServerProcess, type ServerProcess } from '../support/server-process.js';

/**
 * The fidelity tests' shared shape: the same steps through the AWS SDK v3 (JSON) and
 * Debian's boto3 (Query), each with queue names of its own.
 */
export function bothProtocols(
  drivers: Driver[],
  name: string,
  run: (api: Driver, q: (n: string) => string) => Promise<void>,
): void {
  describe(name, () => {
    for (const [i, label] of ['JSON (AWS SDK v3)', 'Query (boto3)'].entries()) {
      test(label, i === 1 ? needs('boto3') : {}, () => run(drivers[i]!, (n) => `${drivers[i]!.protocol}-${n}`));
    }
  });
}

/**
 * A fidelity file's server (SQLite, on a manual clock, so visibility examples take no real
 * time) and a driver per protocol: the AWS SDK v3 and, unless it is missing outside CI
 * (scripts/skip-groups.mjs), Debian's boto3, whose half of each comparison then skips.
 * Returns the server, the drivers and the file's `bothProtocols`.
 */
export function useBothProtocols() {
  let server: ServerProcess | undefined;
  const drivers: Driver[] = [];
  useServerProcess(
    { storage: 'sqlite', manualClock: true },
    async (s) => {
      server = s;
      drivers.push(jsonSdkDriver(s.url));
      if (needs('boto3').skip) return;
      drivers.push(await boto3Driver(s.url));
      assert.equal(drivers[1]!.protocol, 'query', `${drivers[1]!.name} does not speak the Query protocol`);
    },
    () => Promise.all(drivers.map((d) => d.close())),
  );
  return {
    server: () => server!,
    drivers,
    bothProtocols: (name: string, run: Parameters<typeof bothProtocols>[2]) => bothProtocols(drivers, name, run),
  };
}

export async function expectError(call: Promise<unknown>, code: string, message: string | RegExp): Promise<void> {
  const err = await call.then(
    () => assert.fail(`expected ${code}`),
    (e: unknown) => e,
  );
  assert.ok(err instanceof ApiError, String(err));
  assert.equal(err.code, code);
  if (message instanceof RegExp) assert.match(err.message, message);
  else assert.equal(err.message, message);
}

export async function create(api: Driver, QueueName: string, Attributes?: Record<string, string>): Promise<string> {
  return (await api.call('CreateQueue', { QueueName, Attributes })).QueueUrl as string;
}

export async function receive(api: Driver, QueueUrl: string, extra: Record<string, unknown> = {}) {
  const out = await api.call('ReceiveMessage', { QueueUrl, WaitTimeSeconds: 0, ...extra });
  return (out.Messages ?? []) as {
    Body: string;
    ReceiptHandle: string;
    MessageId: string;
    Attributes?: Record<string, string>;
  }[];
}

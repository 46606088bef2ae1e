import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApiError, type Driver } from '../query/drivers.js';
import { needs } from '../support/requirements.js';

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

import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import * as sdk from '@aws-sdk/client-sqs';
import { sqsClient } from '../support/server-process.js';

/**
 * One SQS client behind a common call: inputs and outputs in the JSON-protocol shapes
 * (blobs as base64), errors as ApiError. The scenarios run unchanged on every driver.
 */
export interface Driver {
  name: string;
  protocol: 'json' | 'query';
  call(op: string, input?: Record<string, unknown>): Promise<Record<string, any>>;
  close(): Promise<void>;
}

/** The code a driver throws when its client predates an action (Debian's boto3 1.26 has no move tasks). */
export const CLIENT_LACKS_OPERATION = 'ClientLacksOperation';

export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/**
 * Debian's packaged clients speak Query; a pip-installed one first on PATH may not.
 * REDRIVE_TEST_AWS_CLI and REDRIVE_TEST_PYTHON name others (scripts/preflight.mjs checks
 * the same ones before npm test runs anything).
 */
export const AWS_CLI = process.env.REDRIVE_TEST_AWS_CLI || '/usr/bin/aws';
export const PYTHON = process.env.REDRIVE_TEST_PYTHON || '/usr/bin/python3';

export function jsonSdkDriver(url: string, client: sdk.SQSClient = sqsClient(url)): Driver {
  return {
    name: '@aws-sdk/client-sqs',
    protocol: 'json',
    async call(op, input = {}) {
      const Command = (sdk as unknown as Record<string, new (i: unknown) => sdk.ListQueuesCommand>)[`${op}Command`]!;
      try {
        const { $metadata: _, ...output } = (await client.send(
          new Command(mapBlobs(input, (b64) => Buffer.from(b64 as string, 'base64'))),
        )) as unknown as Record<string, unknown>;
        return mapBlobs(output, (bytes) => Buffer.from(bytes as Uint8Array).toString('base64')) as Record<string, any>;
      } catch (e) {
        const err = e as { Code?: string; name: string; message: string; $metadata?: { httpStatusCode?: number } };
        // With query compatibility the SDK puts the x-amzn-query-error code in Code.
        throw new ApiError(err.Code ?? err.name, err.message, err.$metadata?.httpStatusCode);
      }
    },
    async close() {
      client.destroy();
    },
  };
}

export interface Keys {
  accessKeyId: string;
  secretAccessKey: string;
}

/** boto3 in a long-lived Python process; `python` picks which installation. */
export async function boto3Driver(url: string, python = PYTHON, keys?: Keys): Promise<Driver & { botocore: string }> {
  const script = fileURLToPath(new URL('../../../test/query/boto3_driver.py', import.meta.url));
  const proc = spawn(python, [script, url, ...(keys ? [keys.accessKeyId, keys.secretAccessKey] : [])], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, HOME: tmpdir() },
  });
  const lines = createInterface({ input: proc.stdout! })[Symbol.asyncIterator]();
  const next = async () => JSON.parse((await lines.next()).value as string);
  const { ready } = await next();
  let queue = Promise.resolve();
  return {
    name: `boto3 (botocore ${ready.botocore})`,
    protocol: ready.protocol === 'query' ? 'query' : 'json',
    botocore: ready.botocore,
    call(op, input = {}) {
      // One request at a time on the pipe.
      const answer = queue.then(async () => {
        proc.stdin!.write(`${JSON.stringify({ op, input })}\n`);
        return next();
      });
      queue = answer.then(
        () => undefined,
        () => undefined,
      );
      return answer.then((a) => {
        if (a.error) throw new ApiError(a.error.code, a.error.message, a.error.status);
        return a.output;
      });
    },
    async close() {
      proc.stdin!.end();
      await new Promise((resolve) => proc.once('exit', resolve));
    },
  };
}

/** The Debian CLI (Query protocol); it signs for `region` with `keys` (any keys by default). */
export function awsCliDriver(url: string, opts: { region?: string; keys?: Keys } = {}): Driver {
  const home = mkdtempSync(join(tmpdir(), 'redrive-awscli-'));
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    AWS_ACCESS_KEY_ID: opts.keys?.accessKeyId ?? 'x',
    AWS_SECRET_ACCESS_KEY: opts.keys?.secretAccessKey ?? 'y',
    AWS_DEFAULT_REGION: opts.region ?? 'us-east-1',
    AWS_MAX_ATTEMPTS: '1',
    AWS_PAGER: '',
  };
  return {
    name: `aws cli${opts.region ? ` (${opts.region})` : ''}`,
    protocol: 'query',
    call(op, input = {}) {
      const command = op.replace(/([a-z])([A-Z])/g, '$1-$2').toLowerCase();
      const args = [
        'sqs',
        command,
        '--cli-input-json',
        JSON.stringify(input),
        '--endpoint-url',
        url,
        '--output',
        'json',
      ];
      return new Promise((resolve, reject) => {
        execFile(AWS_CLI, args, { env }, (err, stdout, stderr) => {
          if (!err) return resolve(stdout.trim() ? JSON.parse(stdout) : {});
          if (/Invalid choice/.test(stderr)) return reject(new ApiError(CLIENT_LACKS_OPERATION, op));
          const m =
            /An error occurred \(([^)]+)\) when calling the \w+ operation(?: \(reached max retries: \d+\))?: (.*)/s.exec(
              stderr,
            );
          reject(m ? new ApiError(m[1]!, m[2]!.trim()) : new ApiError('ClientFailure', stderr || String(err)));
        });
      });
    },
    async close() {
      rmSync(home, { recursive: true, force: true });
    },
  };
}

/** Applies `fn` to every BinaryValue in a JSON-shaped value. */
function mapBlobs(value: unknown, fn: (blob: unknown) => unknown): unknown {
  if (Array.isArray(value)) return value.map((v) => mapBlobs(v, fn));
  if (value && typeof value === 'object' && !(value instanceof Uint8Array)) {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, k === 'BinaryValue' ? fn(v) : mapBlobs(v, fn)]),
    );
  }
  return value;
}

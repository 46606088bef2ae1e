/** The `redrive dlq` commands against a running server. */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { counts, createQueue, receive } from './helpers.js';
import { arn, deadLetter, latestTask, sourceOf, waitFor } from './dlq-helpers.js';

const CLI = fileURLToPath(new URL('../../src/cli/index.js', import.meta.url));
let server: ServerProcess;
let sqs: SQSClient;

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [CLI, 'dlq', ...args, '--endpoint', server.url]);
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

before(async () => {
  server = await startServerProcess({ storage: 'memory', manualClock: true });
  sqs = server.client();
  const a = await sourceOf(sqs, 'orders', 'orders-dlq');
  const b = await sourceOf(sqs, 'payments', 'orders-dlq');
  await deadLetter(sqs, a, ['{"type":"order","id":1}', '{"type":"refund","id":2}']);
  await deadLetter(sqs, b, ['{"type":"order","id":3}']);
});
after(async () => {
  await server.stop();
  server.cleanup();
});

test('list shows each dead-letter queue with its depth and sources', async () => {
  const r = await cli('list');
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /DEAD-LETTER QUEUE\s+MESSAGES\s+IN FLIGHT\s+SOURCES/);
  assert.match(r.stdout, /orders-dlq\s+3\s+0\s+orders, payments/);
  assert.doesNotMatch(r.stdout, /^orders\s/m, 'a source is not a dead-letter queue');
});

test('peek shows messages without receiving them', async () => {
  const r = await cli('peek', 'orders-dlq', '--limit', '2');
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /received 1x/);
  assert.match(r.stdout, /dead-lettered .* from orders/);
  assert.match(r.stdout, /died 1x in orders: delivery_limit, \S+ \.\. \S+/, 'the death history');
  assert.match(r.stdout, /body: \{"type":"order","id":1\}/);
  assert.match(r.stdout, /more: --from \S+/);
  const [m] = await receive(sqs, `${server.url}/000000000000/orders-dlq`, { VisibilityTimeout: 0, MessageSystemAttributeNames: ['ApproximateReceiveCount'] });
  assert.equal(m!.Attributes!.ApproximateReceiveCount, '2', 'peek counted no receive');
  const missing = await cli('peek', 'nope');
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /NonExistentQueue/);
});

test('redrive --dry-run with a filter counts; redrive --watch shows progress to the end', async () => {
  const dry = await cli('redrive', 'orders-dlq', '--dry-run', '--json-path', '$.type', '--equals', 'order');
  assert.equal(dry.code, 0, dry.stderr);
  assert.equal(dry.stdout, '2 messages would move\n');
  await createQueue(sqs, 'replay');
  const r = await cli('redrive', 'orders-dlq', '--to', 'replay', '--watch', '--json-path', '$.type', '--equals', 'order');
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^started task \S+/);
  assert.match(r.stdout, /COMPLETED {2}moved 2\/2 \(100%\)/);
  assert.equal((await counts(sqs, `${server.url}/000000000000/replay`)).visible, 2);
});

test('tasks lists a running task; cancel stops it', async () => {
  await deadLetter(sqs, `${server.url}/000000000000/orders`, ['late1', 'late2', 'late3']);
  const start = await cli('redrive', 'orders-dlq', '--rate', '1');
  assert.equal(start.code, 0, start.stderr);
  const handle = /started task (\S+)/.exec(start.stdout)![1]!;
  await waitFor(() => latestTask(sqs, arn('orders-dlq')), (t) => t?.ApproximateNumberOfMessagesMoved === 1, 'first message');
  const listed = await cli('tasks', 'orders-dlq');
  assert.match(listed.stdout, new RegExp(`RUNNING\\s+1/4\\s+\\(sources\\)\\s+${handle.replace(/[+/=]/g, '\\$&')}`));
  const cancelled = await cli('cancel', handle);
  assert.equal(cancelled.code, 0, cancelled.stderr);
  assert.equal(cancelled.stdout, 'cancelled; 1 messages had moved\n');
  const again = await cli('cancel', handle);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /InvalidParameterValue/);
});

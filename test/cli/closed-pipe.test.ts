/**
 * A client command whose reader stops early (`redrive queues list | head -2`) exits quietly,
 * as `ls | head` does: no EPIPE stack, exit status 0. The listings are made longer than a
 * pipe's buffer (64 KiB) so that the command is still writing when `head` leaves.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, test } from 'node:test';
import { CreateQueueCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { CLI } from './support.js';

let server: ServerProcess;
let sqs: SQSClient;
const PAIRS = 600;
const long = 'x'.repeat(70);

before(async () => {
  server = await startServerProcess({ storage: 'memory' });
  sqs = server.client();
  for (let i = 0; i < PAIRS; i++) {
    const dlq = await sqs.send(new CreateQueueCommand({ QueueName: `dlq-${long}-${i}` }));
    const arn = dlq.QueueUrl!.replace(/^.*\/(\d{12})\/(.*)$/, 'arn:aws:sqs:us-east-1:$1:$2');
    await sqs.send(
      new CreateQueueCommand({
        QueueName: `src-${long}-${i}`,
        Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arn, maxReceiveCount: 3 }) },
      }),
    );
  }
});
after(async () => {
  await server.stop();
  server.cleanup();
});

/** `redrive <args> | head -<lines>` in bash, with pipefail so that the status is the CLI's. */
function intoHead(args: string[], lines: number) {
  const quoted = [process.execPath, CLI, ...args, '--endpoint', server.url].map((a) => `'${a}'`).join(' ');
  return spawnSync('bash', ['-c', `set -o pipefail; ${quoted} | head -${lines}`], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: '/nonexistent' },
    maxBuffer: 64 << 20,
    timeout: 60_000,
  });
}

for (const args of [
  ['queues', 'list'],
  ['dlq', 'list'],
  ['queues', 'list', '--json'],
]) {
  test(`redrive ${args.join(' ')} | head exits 0 with nothing on stderr`, () => {
    const full = intoHead(args, 1_000_000);
    assert.equal(full.status, 0, full.stderr);
    assert.ok(full.stdout.length > 100_000, `the listing outgrows a pipe's buffer (${full.stdout.length} bytes)`);
    const r = intoHead(args, 2);
    assert.equal(r.stderr, '');
    assert.equal(r.status, 0);
    assert.equal(r.stdout.split('\n').length, 3);
  });
}

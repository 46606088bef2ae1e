/**
 * The shipped rules pass `promtool check rules` and their unit tests `promtool test rules`;
 * a real scrape passes `promtool check metrics` (Debian's prometheus package, see .ci/run).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { needs } from '../support/requirements.js';
import { useServerProcess, type ServerProcess } from '../support/server-process.js';
import { MONITORING } from './scrape.js';

function promtool(args: string[], input?: string) {
  const r = spawnSync('promtool', args, { cwd: MONITORING, input, encoding: 'utf8' });
  assert.ok(!r.error, `promtool could not run (install Debian's prometheus package): ${r.error?.message}`);
  return r;
}

test('promtool check rules passes on the shipped rules', needs('promtool'), () => {
  const r = promtool(['check', 'rules', 'redrive-alerts.yml']);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /SUCCESS: 8 rules found/);
});

test("promtool test rules passes the rules' unit tests", needs('promtool'), () => {
  const r = promtool(['test', 'rules', 'redrive-alerts.test.yml']);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /SUCCESS/);
});

let server: ServerProcess;
useServerProcess({}, (s) => (server = s));

test('promtool check metrics finds no problem in a scrape with every kind of series', needs('promtool'), async () => {
  const sqs = server.client();
  const dlq = (await sqs.send(new CreateQueueCommand({ QueueName: 'lint-dlq' }))).QueueUrl!;
  const src = (
    await sqs.send(
      new CreateQueueCommand({
        QueueName: 'lint',
        Attributes: {
          RedrivePolicy: JSON.stringify({
            deadLetterTargetArn: 'arn:aws:sqs:us-east-1:000000000000:lint-dlq',
            maxReceiveCount: 1,
          }),
        },
      }),
    )
  ).QueueUrl!;
  await sqs.send(new CreateQueueCommand({ QueueName: 'lint.fifo', Attributes: { FifoQueue: 'true' } }));
  await sqs.send(new SendMessageCommand({ QueueUrl: src, MessageBody: 'a' }));
  await sqs.send(new SendMessageCommand({ QueueUrl: dlq, MessageBody: 'b' }));
  await sqs.send(new ReceiveMessageCommand({ QueueUrl: src, VisibilityTimeout: 0 }));
  await sqs.send(new ReceiveMessageCommand({ QueueUrl: src, VisibilityTimeout: 0 }));
  const [m] = (await sqs.send(new ReceiveMessageCommand({ QueueUrl: dlq }))).Messages ?? [];
  await sqs.send(new DeleteMessageCommand({ QueueUrl: dlq, ReceiptHandle: m!.ReceiptHandle }));
  const res = await fetch(`${server.url}/metrics`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type')!, /^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  for (const name of [
    'redrive_messages_dead_lettered_total',
    'redrive_group_commit_batch_size_bucket',
    'process_cpu_seconds_total',
    'redrive_requests_total',
  ]) {
    assert.ok(text.includes(`\n${name}{`), `the scrape has ${name}`);
  }
  const r = promtool(['check', 'metrics'], text);
  assert.equal(r.status, 0, `promtool check metrics: ${r.stdout}${r.stderr}`);
  assert.equal((r.stdout + r.stderr).trim(), '', 'no warnings');
});

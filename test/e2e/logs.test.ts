/**
 * The server's logs, read as a log shipper reads them: JSON lines on stdout of a real
 * server process. At `debug` every request has an access line (action, queue, status,
 * error code, duration, caller account, protocol); at `info` every change to the system
 * has one line, and requests have none.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import {
  CancelMessageMoveTaskCommand,
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueUrlCommand,
  ListMessageMoveTasksCommand,
  PurgeQueueCommand,
  SendMessageBatchCommand,
  SetQueueAttributesCommand,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import { redrivePolicy } from './dlq-helpers.js';
import { SDK_HEADER } from './helpers.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

const ACCOUNT = '000000000000';
const arn = (name: string) => `arn:aws:sqs:us-east-1:${ACCOUNT}:${name}`;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Line = Record<string, unknown> & { level: number; msg: string };

/** Every JSON line the server printed so far. */
function lines(server: ServerProcess): Line[] {
  return server
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Line);
}

/** Waits until a line with this message (and these fields) appears; returns it. */
async function logged(server: ServerProcess, msg: string, fields: Record<string, unknown> = {}): Promise<Line> {
  const until = Date.now() + 10_000;
  for (;;) {
    const hit = lines(server).find(
      (l) => l.msg === msg && Object.entries(fields).every(([k, v]) => JSON.stringify(l[k]) === JSON.stringify(v)),
    );
    if (hit) return hit;
    assert.ok(Date.now() < until, `no "${msg}" line with ${JSON.stringify(fields)} in:\n${server.output()}`);
    await pause(50);
  }
}

const INFO = 30;
const DEBUG = 20;
const WARN = 40;

const dir = mkdtempSync(join(tmpdir(), 'redrive-logs-'));
const configFile = join(dir, 'redrive.json');
const servers: ServerProcess[] = [];
after(async () => {
  for (const s of servers) {
    if (s.proc.exitCode === null) await s.stop();
    s.cleanup();
  }
  rmSync(dir, { recursive: true, force: true });
});

test('at debug: one access line per request, with action, queue, status, error code, duration, account and protocol', {
  timeout: 30_000,
}, async () => {
  const server = await startServerProcess({ storage: 'memory', args: ['--log-level', 'debug'] });
  servers.push(server);
  const sqs = server.client();
  await sqs.send(new CreateQueueCommand({ QueueName: 'access' }));
  const ok = await logged(server, 'request', { action: 'CreateQueue', queue: 'access' });
  assert.equal(ok.level, DEBUG);
  assert.equal(ok.status, 200);
  assert.equal(ok.protocol, 'json');
  assert.equal(ok.account, ACCOUNT);
  assert.equal(ok.errorCode, undefined);
  assert.equal(typeof ok.ms, 'number');
  assert.ok((ok.ms as number) >= 0 && (ok.ms as number) < 10_000);
  assert.match(String(ok.requestId), /^[0-9a-f-]{36}$/);

  await assert.rejects(sqs.send(new GetQueueUrlCommand({ QueueName: 'missing' })));
  const failed = await logged(server, 'request', { action: 'GetQueueUrl', queue: 'missing' });
  assert.equal(failed.status, 400);
  assert.equal(failed.errorCode, 'AWS.SimpleQueueService.NonExistentQueue');

  // The Query protocol, to a queue URL: the queue comes from the path.
  const res = await fetch(`${server.url}/${ACCOUNT}/access`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...SDK_HEADER },
    body: 'Action=GetQueueAttributes&AttributeName.1=All',
  });
  assert.equal(res.status, 200);
  const query = await logged(server, 'request', { action: 'GetQueueAttributes', protocol: 'query' });
  assert.equal(query.queue, 'access');
  assert.equal(query.status, 200);

  // Signed with a 12-digit key id, the caller is that account.
  const other = new (sqs.constructor as new (c: object) => typeof sqs)({
    endpoint: server.url,
    region: 'us-east-1',
    maxAttempts: 1,
    credentials: { accessKeyId: '111122223333', secretAccessKey: 'x' },
  });
  await other.send(new CreateQueueCommand({ QueueName: 'theirs' }));
  other.destroy();
  assert.equal((await logged(server, 'request', { action: 'CreateQueue', queue: 'theirs' })).account, '111122223333');

  assert.equal((await fetch(`${server.url}/health`)).status, 200);
  const health = await logged(server, 'request', { path: '/health' });
  assert.equal(health.status, 200);
  assert.equal(health.action, undefined);
});

test('at info: a line for each change to the system, none per request', { timeout: 60_000 }, async () => {
  writeFileSync(configFile, JSON.stringify({ policies: [] }));
  const server = await startServerProcess({ storage: 'memory', args: ['--config', configFile] });
  servers.push(server);
  const sqs = server.client();
  const url = (q: string) => `${server.url}/${ACCOUNT}/${q}`;

  await sqs.send(new CreateQueueCommand({ QueueName: 'events', Attributes: { VisibilityTimeout: '45' } }));
  const created = await logged(server, 'queue created', { queue: 'events' });
  assert.equal(created.level, INFO);
  assert.deepEqual([created.account, created.fifo, created.attributes], [ACCOUNT, false, ['VisibilityTimeout']]);
  // Creating it again changes nothing and logs nothing.
  await sqs.send(new CreateQueueCommand({ QueueName: 'events' }));

  await sqs.send(
    new SetQueueAttributesCommand({
      QueueUrl: url('events'),
      Attributes: { DelaySeconds: '2', MaximumMessageSize: '2048', RedriveMaxLength: '2' } as Record<string, string>,
    }),
  );
  const changed = await logged(server, 'queue attributes changed', { queue: 'events' });
  assert.deepEqual(changed.set, ['DelaySeconds', 'MaximumMessageSize', 'RedriveMaxLength']);
  assert.deepEqual(changed.removed, []);

  // A length limit of 2 without a dead-letter queue: a batch of 5 drops the 3 oldest.
  await sqs.send(new SetQueueAttributesCommand({ QueueUrl: url('events'), Attributes: { DelaySeconds: '0' } }));
  await sqs.send(
    new SendMessageBatchCommand({
      QueueUrl: url('events'),
      Entries: [1, 2, 3, 4, 5].map((i) => ({ Id: `m${i}`, MessageBody: `m${i}` })),
    }),
  );
  const dropped = await logged(server, 'messages dropped: the queue has no dead-letter queue', { queue: 'events' });
  assert.equal(dropped.level, INFO);
  assert.equal(dropped.reason, 'maxlen');
  assert.equal(dropped.count, 3);
  assert.equal((dropped.messageIds as string[]).length, 3);

  await sqs.send(new PurgeQueueCommand({ QueueUrl: url('events') }));
  assert.equal((await logged(server, 'queue purged', { queue: 'events' })).account, ACCOUNT);

  // Move tasks: finished, cancelled, failed.
  for (const q of ['dlq', 'dest', 'gone']) await sqs.send(new CreateQueueCommand({ QueueName: q }));
  await sqs.send(new CreateQueueCommand({ QueueName: 'src', Attributes: { RedrivePolicy: redrivePolicy('dlq') } }));
  const fill = (n: number) =>
    sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: url('dlq'),
        Entries: Array.from({ length: n }, (_, i) => ({ Id: `e${i}`, MessageBody: `d${i}` })),
      }),
    );
  await fill(3);
  await sqs.send(new StartMessageMoveTaskCommand({ SourceArn: arn('dlq'), DestinationArn: arn('dest') }));
  const started = await logged(server, 'move task started', { source: arn('dlq'), destination: arn('dest') });
  const finished = await logged(server, 'move task finished', { task: started.task });
  assert.deepEqual([finished.level, finished.moved], [INFO, 3]);

  await fill(10);
  const { TaskHandle } = await sqs.send(
    new StartMessageMoveTaskCommand({
      SourceArn: arn('dlq'),
      DestinationArn: arn('dest'),
      MaxNumberOfMessagesPerSecond: 1,
    }),
  );
  await sqs.send(new CancelMessageMoveTaskCommand({ TaskHandle }));
  const cancelled = await logged(server, 'move task cancelled', { source: arn('dlq') });
  assert.equal(cancelled.level, INFO);
  assert.equal(typeof cancelled.moved, 'number');

  await sqs.send(
    new StartMessageMoveTaskCommand({
      SourceArn: arn('dlq'),
      DestinationArn: arn('gone'),
      MaxNumberOfMessagesPerSecond: 1,
    }),
  );
  const third = await logged(server, 'move task started', { destination: arn('gone') });
  await sqs.send(new DeleteQueueCommand({ QueueUrl: url('gone') }));
  const failed = await logged(server, 'move task failed', { task: third.task });
  assert.equal(failed.level, WARN);
  assert.equal(failed.reason, 'AWS.SimpleQueueService.NonExistentQueue');
  const status = await sqs.send(new ListMessageMoveTasksCommand({ SourceArn: arn('dlq') }));
  assert.equal(status.Results?.[0]?.Status, 'FAILED');

  const deleted = await logged(server, 'queue deleted', { queue: 'gone' });
  assert.equal(deleted.level, INFO);

  writeFileSync(
    configFile,
    JSON.stringify({ policies: [{ name: 'all', pattern: '^events$', definition: { messageTtlSeconds: 60 } }] }),
  );
  server.proc.kill('SIGHUP');
  const reloaded = await logged(server, 'policies reloaded');
  assert.deepEqual(reloaded.policies, ['all']);

  assert.deepEqual(
    lines(server).filter((l) => l.msg === 'request'),
    [],
    'no access lines at info',
  );
});

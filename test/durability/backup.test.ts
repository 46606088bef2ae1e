/**
 * `redrive backup`: a consistent copy of a running SQLite server's data,
 * taken while 16 clients send; a server started on the restored copy has every message
 * acknowledged before the backup began, and the queues' attributes, tags and move task.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { test } from 'node:test';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ListQueueTagsCommand,
  SendMessageCommand,
  StartMessageMoveTaskCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { rawJson } from '../e2e/helpers.js';
import { arn, deadLetter, latestTask, sourceOf } from '../e2e/dlq-helpers.js';

const CLI = fileURLToPath(new URL('../../src/cli/index.js', import.meta.url));
const CLIENTS = 16;

/** Every body in the queue, by PeekMessages pages (no receive, so nothing changes). */
async function bodies(server: ServerProcess, queue: string): Promise<Set<string>> {
  const out = new Set<string>();
  let token: string | undefined;
  do {
    const res = await rawJson(
      server.url,
      'AmazonSQS.PeekMessages',
      JSON.stringify({
        QueueUrl: `${server.url}/000000000000/${queue}`,
        MaxResults: 100,
        ...(token ? { NextToken: token } : {}),
      }),
    );
    assert.equal(res.status, 200, res.text);
    for (const m of res.json.Messages as { Body: string }[]) out.add(m.Body);
    token = res.json.NextToken as string | undefined;
  } while (token);
  return out;
}

/** What a restored server must show of the queues besides their messages. */
async function shape(sqs: SQSClient, url: string) {
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['VisibilityTimeout', 'DelaySeconds'] }),
  );
  const { Tags } = await sqs.send(new ListQueueTagsCommand({ QueueUrl: url }));
  return { Attributes, Tags };
}

test('backup under load, restore: every message acknowledged before the backup, and the queues, tags and move task', {
  timeout: 120_000,
}, async (t) => {
  if (process.env.REDRIVE_TEST_STORAGE === 'postgres')
    return t.skip('a backup of the SQLite data directory (PostgreSQL: pg_dump, docs/backup.md)');
  const root = mkdtempSync(join(tmpdir(), 'redrive-backup-'));
  const dataDir = join(root, 'data');
  const server = await startServerProcess({ storage: 'sqlite', dataDir });
  let restored: ServerProcess | undefined;
  try {
    const sqs = server.client();
    const { QueueUrl } = await sqs.send(
      new CreateQueueCommand({
        QueueName: 'load',
        Attributes: { VisibilityTimeout: '45', DelaySeconds: '0' },
        tags: { team: 'shop', tier: 'gold' },
      }),
    );
    // A move task that is still running when the backup is taken (1 message a second).
    const src = await sourceOf(sqs, 'bk-src', 'bk-dlq');
    await deadLetter(
      sqs,
      src,
      Array.from({ length: 20 }, (_, i) => `dead ${i}`),
    );
    await sqs.send(new StartMessageMoveTaskCommand({ SourceArn: arn('bk-dlq'), MaxNumberOfMessagesPerSecond: 1 }));
    const expectedShape = await shape(sqs, QueueUrl!);

    const acked: string[] = [];
    let sending = true;
    const clients = Array.from({ length: CLIENTS }, async (_, c) => {
      for (let i = 0; sending; i++) {
        const body = `c${c}-${i}`;
        await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: body }));
        acked.push(body);
      }
    });
    while (acked.length < 500) await new Promise((r) => setTimeout(r, 20));
    const before = [...acked];
    const backupFile = join(root, 'redrive-backup.db');
    const { stdout } = await promisify(execFile)(process.execPath, [CLI, 'backup', backupFile, '--data-dir', dataDir]);
    const during = acked.length - before.length;
    sending = false;
    await Promise.all(clients);
    assert.match(stdout, /^backed up .* to .*redrive-backup\.db: 3 queues, \d+ messages/);
    assert.ok(during > 0, 'the clients kept sending while the backup ran');
    assert.deepEqual(readdirSync(root).sort(), ['data', 'redrive-backup.db'], 'no partial file left');

    // Restore: the copy becomes redrive.db of a new data directory.
    const restoredDir = join(root, 'restored');
    mkdirSync(restoredDir);
    copyFileSync(backupFile, join(restoredDir, 'redrive.db'));
    restored = await startServerProcess({ storage: 'sqlite', dataDir: restoredDir });
    const copy = await bodies(restored, 'load');
    const missing = before.filter((b) => !copy.has(b));
    assert.deepEqual(missing, [], `acknowledged before the backup began, missing from the copy (of ${before.length})`);
    assert.ok(copy.size <= acked.length);
    const r = restored.client();
    assert.deepEqual(await shape(r, `${restored.url}/000000000000/load`), expectedShape, 'attributes and tags');
    const task = await latestTask(r, arn('bk-dlq'));
    assert.ok(task, 'the move task');
    assert.equal(task.MaxNumberOfMessagesPerSecond, 1);
    assert.equal(task.ApproximateNumberOfMessagesToMove, 20);
  } finally {
    await server.stop();
    await restored?.stop();
    rmSync(root, { recursive: true, force: true });
  }
});

test('backup of a stopped server, and the refusals: no database there, a file that exists', async (t) => {
  if (process.env.REDRIVE_TEST_STORAGE === 'postgres') return t.skip('a backup of the SQLite data directory');
  const root = mkdtempSync(join(tmpdir(), 'redrive-backup-'));
  const run = (...args: string[]) =>
    promisify(execFile)(process.execPath, [CLI, 'backup', ...args]).then(
      (r) => ({ code: 0, ...r }),
      (e: { code: number; stdout: string; stderr: string }) => e,
    );
  try {
    const server = await startServerProcess({ storage: 'sqlite', dataDir: join(root, 'data') });
    await server.client().send(new CreateQueueCommand({ QueueName: 'quiet' }));
    await server.stop();
    const ok = await run(join(root, 'a.db'), '--data-dir', join(root, 'data'));
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /: 1 queues, 0 messages/);
    const again = await run(join(root, 'a.db'), '--data-dir', join(root, 'data'));
    assert.equal(again.code, 1);
    assert.match(again.stderr, /a\.db already exists: give the name of a new file/);
    const none = await run(join(root, 'b.db'), '--data-dir', join(root, 'nothing'));
    assert.equal(none.code, 1);
    assert.match(none.stderr, /nothing\/redrive\.db does not exist/);
    assert.equal(existsSync(join(root, 'b.db')), false);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

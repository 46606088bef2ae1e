/**
 * One server per SQLite data directory: a second server on the
 * same directory refuses to start, naming the directory and the holder's pid, while the
 * first keeps serving; a server killed with SIGKILL leaves no lock behind.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { CreateQueueCommand, ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { startServerProcess } from '../support/server-process.js';

test('a second server on the same data directory exits non-zero, naming it and the holder; the first keeps serving', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'redrive-lock-'));
  // Always SQLite: the lock is the SQLite store's (a PostgreSQL database is meant to be shared).
  const first = await startServerProcess({ storage: 'sqlite', dataDir });
  try {
    const sqs = first.client();
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'locked' }));
    await assert.rejects(startServerProcess({ storage: 'sqlite', dataDir }), (e: Error) => {
      assert.match(
        e.message,
        new RegExp(
          `--data-dir ${dataDir}: ${dataDir} is in use by another Redrive server \\(pid ${first.proc.pid}\\): stop that server first`,
        ),
      );
      return true;
    });
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'still here' }));
    const { Messages } = await sqs.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 1 }));
    assert.deepEqual(
      Messages?.map((m) => m.Body),
      ['still here'],
      'the first server serves on',
    );
  } finally {
    await first.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('SIGKILL, then a new server on the same directory at once: it starts, with the data', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'redrive-lock-'));
  try {
    const killed = await startServerProcess({ storage: 'sqlite', dataDir });
    const sqs = killed.client();
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'survivor' }));
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'acknowledged' }));
    await killed.kill();
    const next = await startServerProcess({ storage: 'sqlite', dataDir });
    try {
      const url = `${next.url}/000000000000/survivor`;
      const { Messages } = await next.client().send(new ReceiveMessageCommand({ QueueUrl: url }));
      assert.deepEqual(
        Messages?.map((m) => m.Body),
        ['acknowledged'],
      );
    } finally {
      await next.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

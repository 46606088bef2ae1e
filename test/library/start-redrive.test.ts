/**
 * startRedrive() (src/library/start-redrive.ts, docs/library.md) in this process: the
 * server as `redrive serve` runs it, on a free port, several side by side, its queues
 * declared from a value, every store, and close() leaving nothing behind. The packed
 * package's entry points are tested in test/packaging/library.ts.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  GetQueueAttributesCommand,
  ListQueuesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { startRedrive, type RunningRedrive } from '../../src/index.js';
import { createTestDatabase } from '../support/postgres.js';

/** Sends one message to `queue` and receives it back. */
async function roundTrip(redrive: RunningRedrive, queue: string, body: string): Promise<string | undefined> {
  const sqs = new SQSClient(redrive.sqsClientConfig);
  try {
    const QueueUrl = `${redrive.endpoint}/${redrive.accountId}/${queue}`;
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: body }));
    const got = await sqs.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 1 }));
    return got.Messages?.[0]?.Body;
  } finally {
    sqs.destroy();
  }
}

/** Whether nothing listens on the port any more. */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen({ port, host: '127.0.0.1', exclusive: true }, () => probe.close(() => resolve(true)));
  });
}

test('the declared queues are served on a free loopback port, with what a client needs; close() frees the port', async () => {
  const redrive = await startRedrive({
    config: {
      queues: [{ name: 'orders-dlq' }, { name: 'orders', deadLetterQueue: { name: 'orders-dlq', maxReceiveCount: 3 } }],
    },
  });
  const port = Number(new URL(redrive.endpoint).port);
  assert.match(redrive.endpoint, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.equal(redrive.region, 'us-east-1');
  assert.equal(redrive.accountId, '000000000000');
  assert.deepEqual(redrive.sqsClientConfig, {
    endpoint: redrive.endpoint,
    region: redrive.region,
    credentials: redrive.credentials,
  });
  assert.equal(await roundTrip(redrive, 'orders', 'order 1'), 'order 1');
  const sqs = new SQSClient(redrive.sqsClientConfig);
  const attrs = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: `${redrive.endpoint}/${redrive.accountId}/orders`,
      AttributeNames: ['RedrivePolicy'],
    }),
  );
  sqs.destroy();
  assert.match(attrs.Attributes?.RedrivePolicy ?? '', /orders-dlq.*"maxReceiveCount":3/);
  await redrive.close();
  await redrive.close(); // a second close is harmless
  assert.ok(await portFree(port), 'the port is free after close()');
});

test('servers side by side are apart: each has its own port and its own queues', async () => {
  const servers = await Promise.all(
    Array.from({ length: 6 }, (_, i) => startRedrive({ config: { queues: [{ name: `only-${i}` }] } })),
  );
  try {
    assert.equal(new Set(servers.map((s) => s.endpoint)).size, 6);
    for (const [i, s] of servers.entries()) {
      const sqs = new SQSClient(s.sqsClientConfig);
      const { QueueUrls } = await sqs.send(new ListQueuesCommand({}));
      sqs.destroy();
      assert.deepEqual(QueueUrls, [`${s.endpoint}/${s.accountId}/only-${i}`]);
    }
  } finally {
    await Promise.all(servers.map((s) => s.close()));
  }
});

test("an option serve would refuse rejects with serve's line", async () => {
  await assert.rejects(startRedrive({ config: { queues: [{ name: 'a', bogus: 1 } as never] } }), {
    message: 'config: queues[0].bogus: unknown field (known: name, accountId, attributes, tags, deadLetterQueue)',
  });
  await assert.rejects(
    startRedrive({ region: 'Not A Region' }),
    /^StartupError: --region "Not A Region": must be a region name/,
  );
  await assert.rejects(startRedrive({ storage: 'redis' }), /--storage "redis": unknown storage/);
  await assert.rejects(startRedrive({ threads: 0 }), /--threads "0": must be a whole number from 1 to 256/);
});

test('threads: HTTP threads in front of this process, which owns the store; close() ends them and frees the port', async () => {
  const redrive = await startRedrive({ threads: 2, config: { queues: [{ name: 'threaded' }] } });
  const port = Number(new URL(redrive.endpoint).port);
  try {
    assert.equal(await roundTrip(redrive, 'threaded', 'across threads'), 'across threads');
  } finally {
    await redrive.close();
  }
  assert.ok(await portFree(port), 'the port is free after close()');
});

test('SQLite: in a temporary directory that close() removes, or in dataDir, which is kept', async () => {
  // os.tmpdir() follows TMPDIR: an empty one of this test's own shows what is made there.
  const ownTmp = mkdtempSync(join(tmpdir(), 'redrive-tmp-'));
  const tmpBefore = process.env.TMPDIR;
  process.env.TMPDIR = ownTmp;
  try {
    const temporary = await startRedrive({ storage: 'sqlite' });
    const made = readdirSync(ownTmp);
    assert.equal(made.length, 1, 'one temporary directory');
    assert.ok(existsSync(join(ownTmp, made[0]!, 'redrive.db')));
    await temporary.close();
    assert.deepEqual(readdirSync(ownTmp), [], 'removed by close()');
  } finally {
    if (tmpBefore === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = tmpBefore;
    rmSync(ownTmp, { recursive: true, force: true });
  }

  const dataDir = mkdtempSync(join(tmpdir(), 'redrive-kept-'));
  try {
    const first = await startRedrive({ storage: 'sqlite', dataDir, config: { queues: [{ name: 'kept' }] } });
    const sqs = new SQSClient(first.sqsClientConfig);
    await sqs.send(
      new SendMessageCommand({ QueueUrl: `${first.endpoint}/${first.accountId}/kept`, MessageBody: 'durable' }),
    );
    sqs.destroy();
    await first.close();
    const second = await startRedrive({ storage: 'sqlite', dataDir });
    assert.equal(await roundTrip(second, 'kept', 'next'), 'durable');
    await second.close();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('PostgreSQL by URL, with AMQP on a free port', async () => {
  const db = await createTestDatabase();
  try {
    const redrive = await startRedrive({ storage: db.url, amqpPort: 0, config: { queues: [{ name: 'shared' }] } });
    assert.match(redrive.amqpUrl ?? '', /^amqp:\/\/guest:guest@127\.0\.0\.1:\d+$/);
    assert.equal(await roundTrip(redrive, 'shared', 'on postgres'), 'on postgres');
    await redrive.close();
  } finally {
    await db.drop();
  }
});

test('with a credentials file, requests must be signed, and the result carries its first key and account', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'redrive-keys-'));
  try {
    const file = join(dir, 'keys.json');
    writeFileSync(file, JSON.stringify({ AKIDTEST: { secretAccessKey: 'secret', accountId: '111122223333' } }));
    const redrive = await startRedrive({
      credentials: file,
      config: { queues: [{ name: 'q', accountId: '111122223333' }] },
    });
    assert.deepEqual(redrive.credentials, { accessKeyId: 'AKIDTEST', secretAccessKey: 'secret' });
    assert.equal(redrive.accountId, '111122223333');
    assert.equal(await roundTrip(redrive, 'q', 'signed'), 'signed');
    const wrong = new SQSClient({
      ...redrive.sqsClientConfig,
      credentials: { accessKeyId: 'AKIDTEST', secretAccessKey: 'wrong' },
    });
    await assert.rejects(wrong.send(new ListQueuesCommand({})), { name: 'SignatureDoesNotMatch' });
    wrong.destroy();
    await redrive.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

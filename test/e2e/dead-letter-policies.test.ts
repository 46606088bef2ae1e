/** Dead-letter policies from `redrive serve --config`: matching, override order, live reload. */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, test } from 'node:test';
import {
  ListDeadLetterSourceQueuesCommand,
  ListQueueTagsCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import {
  startServerProcess,
  useServerProcess,
  withServerProcess,
  type ServerProcess,
} from '../support/server-process.js';
import { waitFor } from './dlq-helpers.js';
import { assertSqsError, attributes, receive } from './helpers.js';
import { advanceUntilDepth, create, entries, peek, receiveWithHistory, redrivePolicy } from './death-helpers.js';

const CLI = fileURLToPath(new URL('../../src/cli/index.js', import.meta.url));

const dir = mkdtempSync(join(tmpdir(), 'redrive-policies-'));
const configFile = join(dir, 'redrive.json');
const writeConfig = (policies: unknown) => writeFileSync(configFile, JSON.stringify({ policies }));
const policy = (definition: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  name: 'pol',
  pattern: '^pol-',
  priority: 1,
  definition,
  ...extra,
});

let server: ServerProcess;
let sqs: SQSClient;

useServerProcess(
  () => {
    writeConfig([
      policy({ deadLetterTargetName: 'policy-dlq', maxReceiveCount: 1, maxLength: 1, overflow: 'reject-publish' }),
      // Lower priority: never applies while `pol` matches.
      { name: 'weaker', pattern: '.*', priority: 0, definition: { maxLength: 100 } },
    ]);
    return { storage: 'memory', manualClock: true, args: ['--config', configFile] };
  },
  (s) => {
    server = s;
    sqs = s.client();
  },
);

const send = (QueueUrl: string, MessageBody: string) => sqs.send(new SendMessageCommand({ QueueUrl, MessageBody }));
const overLimit = { name: 'OverLimit', status: 403 };

/** Rewrites a config file and sends SIGHUP; resolves once the server logged the outcome. */
async function signalReload(target: ServerProcess, write: () => void, expect: string) {
  const seen = target.output().split(expect).length;
  write();
  target.proc.kill('SIGHUP');
  await waitFor(
    async () => target.output().split(expect).length,
    (n) => n > seen,
    `"${expect}" in the log`,
  );
}
const reload = (policies: unknown, expect = 'policies reloaded') =>
  signalReload(server, () => writeConfig(policies), expect);

describe('dead-letter policies', () => {
  test('a matching policy applies to a queue that sets nothing, and GetQueueAttributes says so', async () => {
    await create(sqs, 'policy-dlq');
    const q = await create(sqs, 'pol-a');
    const a = await attributes(sqs, q);
    assert.equal(a.RedriveMaxLength, '1');
    assert.equal(a.RedriveOverflow, 'reject-publish');
    assert.deepEqual(JSON.parse(a.RedriveAppliedPolicy!), {
      name: 'pol',
      applied: { deadLetterTargetName: 'policy-dlq', maxReceiveCount: 1, maxLength: 1, overflow: 'reject-publish' },
    });
    await send(q, 'one');
    await assertSqsError(send(q, 'two'), overLimit);
    // delivery_limit through the policy's target and maxReceiveCount.
    await receive(sqs, q, { VisibilityTimeout: 0 });
    await receive(sqs, q);
    const dead = await receiveWithHistory(sqs, `${server.url}/000000000000/policy-dlq`);
    assert.deepEqual(entries(dead), [['pol-a', 'delivery_limit', 1]]);
    const sources = await sqs.send(
      new ListDeadLetterSourceQueuesCommand({ QueueUrl: `${server.url}/000000000000/policy-dlq` }),
    );
    assert.deepEqual(sources.queueUrls, [`${server.url}/000000000000/pol-a`]);
  });

  test("the queue's own attributes win over the policy, setting by setting", async () => {
    await create(sqs, 'own-dlq');
    const q = await create(sqs, 'pol-b', { RedriveMaxLength: '3', RedrivePolicy: redrivePolicy('own-dlq', 2) });
    const a = await attributes(sqs, q);
    assert.equal(a.RedriveMaxLength, '3');
    assert.equal(a.RedriveOverflow, 'reject-publish', 'not set on the queue: from the policy');
    assert.deepEqual(JSON.parse(a.RedriveAppliedPolicy!).applied, { overflow: 'reject-publish' });
    for (const b of ['1', '2', '3']) await send(q, b);
    await assertSqsError(send(q, '4'), overLimit);
    // RedrivePolicy carries the target and maxReceiveCount together.
    for (let i = 0; i < 3; i++) await receive(sqs, q, { VisibilityTimeout: 0, MaxNumberOfMessages: 10 });
    const dead = await receiveWithHistory(sqs, `${server.url}/000000000000/own-dlq`);
    assert.deepEqual(entries(dead), [['pol-b', 'delivery_limit', 1]]);
  });

  test('SIGHUP applies a changed policy to existing queues at once; a bad file changes nothing', async () => {
    const q = await create(sqs, 'pol-c');
    await send(q, 'x');
    await assertSqsError(send(q, 'y'), overLimit);
    await reload([policy({ deadLetterTargetName: 'policy-dlq', maxLength: 2, overflow: 'drop-head' })]);
    assert.equal((await attributes(sqs, q)).RedriveMaxLength, '2');
    await send(q, 'y');
    await send(q, 'z');
    const dead = await receiveWithHistory(sqs, `${server.url}/000000000000/policy-dlq`, { MaxNumberOfMessages: 10 });
    assert.deepEqual([dead.Body, ...entries(dead)], ['x', ['pol-c', 'maxlen', 1]]);
    await reload([{ name: 'broken', pattern: '(', definition: {} }], 'config reload failed');
    assert.match(server.output(), /policies\[0\]\.pattern: not a valid regular expression/);
    assert.equal((await attributes(sqs, q)).RedriveMaxLength, '2', 'the policies in force stay');
    await reload([]);
    assert.equal((await attributes(sqs, q)).RedriveMaxLength, undefined, 'no policy, no limit');
  });

  test('a config file that does not validate stops the server at start with the offending field', async () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(
      bad,
      JSON.stringify({ policies: [{ name: 'p', pattern: 'x', definition: { overflow: 'sideways' } }] }),
    );
    await assert.rejects(
      startServerProcess({ storage: 'memory', args: ['--config', bad] }),
      /policies\[0\]\.definition\.overflow: must be "drop-head", "reject-publish" or "reject-publish-dlx"/,
    );
  });
});

describe('queues declared in the config file', () => {
  const declared = (visibility: number) => ({
    queues: [
      {
        name: 'decl-in',
        attributes: { VisibilityTimeout: visibility },
        tags: { team: 'shop' },
        deadLetterQueue: { name: 'decl-dlq', maxReceiveCount: 3 },
      },
      {
        name: 'decl-dlq',
        attributes: {
          RedriveAllowPolicy: JSON.stringify({
            redrivePermission: 'byQueue',
            sourceQueueArns: ['arn:aws:sqs:us-east-1:000000000000:decl-in'],
          }),
        },
      },
      { name: 'decl.fifo' },
    ],
  });

  test('are created at start, idempotently: a restart keeps their messages and applies edits', async () => {
    const file = join(dir, 'queues.json');
    writeFileSync(file, JSON.stringify(declared(45)));
    const first = await startServerProcess({ storage: 'sqlite', args: ['--config', file] });
    const url = `${first.url}/000000000000/decl-in`;
    let c = first.client();
    let a = await attributes(c, url);
    assert.equal(a.VisibilityTimeout, '45');
    assert.deepEqual(JSON.parse(a.RedrivePolicy!), {
      deadLetterTargetArn: 'arn:aws:sqs:us-east-1:000000000000:decl-dlq',
      maxReceiveCount: 3,
    });
    assert.deepEqual((await c.send(new ListQueueTagsCommand({ QueueUrl: url }))).Tags, { team: 'shop' });
    assert.equal((await attributes(c, `${first.url}/000000000000/decl.fifo`)).FifoQueue, 'true');
    await c.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'kept' }));
    await first.stop();
    writeFileSync(file, JSON.stringify(declared(90)));
    const second = await startServerProcess({ storage: 'sqlite', dataDir: first.dataDir, args: ['--config', file] });
    try {
      c = second.client();
      const again = `${second.url}/000000000000/decl-in`;
      a = await attributes(c, again);
      assert.equal(a.VisibilityTimeout, '90');
      assert.equal(a.ApproximateNumberOfMessages, '1');
    } finally {
      await second.stop();
      first.cleanup();
    }
  });

  test('a declaration SQS would refuse stops the server with its reason', async () => {
    const file = join(dir, 'bad-queue.json');
    writeFileSync(file, JSON.stringify({ queues: [{ name: 'oops', attributes: { VisibilityTimeout: 99999 } }] }));
    await assert.rejects(
      startServerProcess({ storage: 'memory', args: ['--config', file] }),
      /queues\[0\] \(oops\): Invalid value for the parameter VisibilityTimeout/,
    );
  });
});

describe('a YAML config file', () => {
  test('is read at start; a reload with a syntax error logs the file and line, and the policies in force stay', async () => {
    const file = join(dir, 'redrive.yaml');
    const policies = (maxLength: number) =>
      `policies:\n  - name: yaml\n    pattern: ^yaml-\n    definition: { maxLength: ${maxLength} }\n`;
    writeFileSync(file, policies(3));
    await withServerProcess({ storage: 'memory', args: ['--config', file] }, async (yaml) => {
      const c = yaml.client();
      const q = await create(c, 'yaml-a');
      assert.equal((await attributes(c, q)).RedriveMaxLength, '3');
      await signalReload(yaml, () => writeFileSync(file, `${policies(4)}  - name: [\n`), 'config reload failed');
      const logged = yaml
        .output()
        .split('\n')
        .find((line) => line.includes('config reload failed'))!;
      assert.equal(
        JSON.parse(logged).err,
        `${file}: invalid YAML at line 6, column 1: Flow sequence in block collection must be sufficiently indented and end with a ]`,
      );
      assert.equal((await attributes(c, q)).RedriveMaxLength, '3', 'the policies in force stay');
      await signalReload(yaml, () => writeFileSync(file, policies(4)), 'policies reloaded');
      assert.equal((await attributes(c, q)).RedriveMaxLength, '4');
    });
  });
});

describe('a policy matching its own dead-letter queue', () => {
  test('the DLQ keeps what was dead-lettered into it and is not listed as its own source', async () => {
    const file = join(dir, 'shop.json');
    writeFileSync(
      file,
      JSON.stringify({
        policies: [
          {
            name: 'shop',
            pattern: '^shop-',
            definition: { deadLetterTargetName: 'shop-dlq', maxReceiveCount: 5, messageTtlSeconds: 2 },
          },
        ],
      }),
    );
    await withServerProcess({ storage: 'memory', manualClock: true, args: ['--config', file] }, async (shop) => {
      const client = shop.client();
      const dlq = await create(client, 'shop-dlq');
      const orders = await create(client, 'shop-orders');
      await client.send(new SendMessageCommand({ QueueUrl: orders, MessageBody: 'order 1' }));
      // 2 s TTL: it expires into shop-dlq, then nothing expires it from there.
      const [arrived] = await advanceUntilDepth(shop, dlq, 1);
      assert.equal(arrived!.Body, 'order 1');
      for (let s = 0; s < 8; s++) await shop.advanceClock(1_000);
      await new Promise((r) => setTimeout(r, 100));
      assert.deepEqual(
        (await peek(shop, dlq)).map((m) => m.Body),
        ['order 1'],
        'still in the DLQ 8 s later',
      );
      assert.doesNotMatch(shop.output(), /message dropped/);
      const sources = await client.send(new ListDeadLetterSourceQueuesCommand({ QueueUrl: dlq }));
      assert.deepEqual(sources.queueUrls, [orders]);
      const { stdout } = await promisify(execFile)(process.execPath, [CLI, 'dlq', 'list', '--endpoint', shop.url]);
      assert.match(stdout, /shop-dlq\s+1\s+0\s+\d+s\s+shop-orders\n/);
      assert.doesNotMatch(stdout, /shop-dlq\s.*shop-dlq/, 'the DLQ is not its own source');
    });
  });
});

/**
 * `redrive serve --threads N` against real server processes: HTTP threads in front of the
 * one thread that owns the engine and the store (docs/scaling.md). Connections spread over
 * the threads and none is dropped by the owner; a thread that throws is restarted, with
 * /ready failing meanwhile and nothing acknowledged lost; SIGTERM answers waiting long polls
 * and drains every thread; a long poll whose client goes away stops on the owner; /metrics
 * counts the requests of every thread. The other end-to-end tests run threaded with
 * REDRIVE_TEST_THREADS=2 (.ci/run).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { startServerProcess, withServerProcess, type ServerProcess } from '../support/server-process.js';

const CLI = fileURLToPath(new URL('../../src/cli/index.js', import.meta.url));

/** A JSON-protocol SQS call on a connection of its own (no keep-alive), so that calls spread over the threads. */
function call(
  url: string,
  action: string,
  body: object,
  signal?: AbortSignal,
): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = request(
      `${url}/`,
      {
        method: 'POST',
        agent: false,
        signal,
        headers: {
          'content-type': 'application/x-amz-json-1.0',
          'x-amz-target': `AmazonSQS.${action}`,
          'content-length': Buffer.byteLength(payload),
        },
      },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text || '{}') }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** A sample of /metrics, summed over its label sets that match `labels`. */
async function metric(url: string, name: string, labels = ''): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (labels && !line.includes(labels)) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

async function until(what: string, check: () => Promise<boolean>, withinMs = 10_000): Promise<void> {
  const end = Date.now() + withinMs;
  while (!(await check())) {
    assert.ok(Date.now() < end, `${what}: not within ${withinMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** GET on a connection of its own: one kept alive to a thread that then crashed would be cut. */
function get(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    request(url, { agent: false }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    })
      .on('error', reject)
      .end();
  });
}

async function readyUntil(url: string, status: number): Promise<string> {
  let body = '';
  await until(`/ready answers ${status}`, async () => {
    const res = await get(`${url}/ready`);
    body = res.body;
    return res.status === status;
  });
  return body;
}

async function queue(server: ServerProcess, name: string): Promise<string> {
  const r = await call(server.url, 'CreateQueue', { QueueName: name });
  assert.equal(r.status, 200);
  return r.body.QueueUrl as string;
}

test('--threads must be a whole number from 1 to 256, one line naming the flag', () => {
  for (const bad of ['0', '-1', '1.5', 'many', '257']) {
    const r = spawnSync(process.execPath, [CLI, 'serve', '--storage', 'memory', '--port', '0', '--threads', bad], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    assert.equal(r.status, 1, `--threads ${bad}: exit status`);
    const lines = r.stdout.trim().split('\n');
    assert.equal(lines.length, 1, r.stdout);
    assert.match(
      (JSON.parse(lines[0]!) as { msg: string }).msg,
      new RegExp(`^--threads "${bad}": must be a whole number from 1 to 256$`),
    );
  }
});

test('connections spread over the threads; the owner drops none, and every request is counted once in /metrics', async () => {
  await withServerProcess({ storage: 'memory', args: ['--threads', '2'] }, async (server) => {
    assert.match(server.output(), /"threads":2/);
    const url = await queue(server, 'spread');
    const sends = 60;
    const answers = await Promise.all(
      Array.from({ length: sends }, (_, i) => call(server.url, 'SendMessage', { QueueUrl: url, MessageBody: `m${i}` })),
    );
    assert.deepEqual(
      answers.map((a) => a.status),
      answers.map(() => 200),
    );
    // A request refused before its action (an unknown one) is counted too, on whichever thread.
    const unknown = await call(server.url, 'NoSuchAction', {});
    assert.equal(unknown.status, 400);
    assert.equal(await metric(server.url, 'redrive_requests_total', 'action="SendMessage"'), sends);
    assert.equal(await metric(server.url, 'redrive_requests_total', 'action="unknown"'), 1);
    const received = new Set<string>();
    while (received.size < sends) {
      const r = await call(server.url, 'ReceiveMessage', { QueueUrl: url, MaxNumberOfMessages: 10 });
      const messages = (r.body.Messages ?? []) as { Body: string }[];
      assert.ok(messages.length > 0, `only ${received.size} of ${sends} received`);
      for (const m of messages) received.add(m.Body);
    }
  });
});

test('a thread that throws is restarted: /ready fails until it listens again, and an acknowledged message survives', async () => {
  await withServerProcess({ storage: 'memory', manualClock: true, args: ['--threads', '2'] }, async (server) => {
    const client = server.client();
    const { QueueUrl } = await client.send(new CreateQueueCommand({ QueueName: 'survives' }));
    const sent = await client.send(new SendMessageCommand({ QueueUrl, MessageBody: 'kept' }));
    const crash = await new Promise<number>((resolve, reject) =>
      request(`${server.url}/_redrive/crash-thread`, {
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json' },
      })
        .on('response', (res) => resolve(res.statusCode!))
        .on('error', reject)
        .end('{}'),
    );
    assert.equal(crash, 200);
    // Whichever thread answers, /ready says so until the new one listens (at least the
    // restart's 100 ms later; polled every 20).
    const down = await readyUntil(server.url, 503);
    assert.match(down, /HTTP thread \d of 2 is restarting/);
    assert.match(server.output(), /HTTP thread failed/);
    await readyUntil(server.url, 200);
    // A new client: the first one's connection may have been to the thread that crashed.
    const after = server.client();
    const { Messages } = await after.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 1 }));
    assert.equal(Messages?.[0]?.MessageId, sent.MessageId);
    await after.send(new DeleteMessageCommand({ QueueUrl, ReceiptHandle: Messages![0]!.ReceiptHandle }));
    assert.match(server.output(), /"restartInMs":\d+/);
  });
});

test('a long poll whose client goes away stops on the owner and takes no message', async () => {
  await withServerProcess({ storage: 'memory', args: ['--threads', '2'] }, async (server) => {
    const url = await queue(server, 'cancelled');
    const gone = new AbortController();
    const poll = call(server.url, 'ReceiveMessage', { QueueUrl: url, WaitTimeSeconds: 20 }, gone.signal).catch(
      (e: Error) => e,
    );
    await until('the poll waits', async () => (await metric(server.url, 'redrive_long_polls_waiting')) === 1);
    gone.abort();
    assert.ok((await poll) instanceof Error);
    await until('the poll stops', async () => (await metric(server.url, 'redrive_long_polls_waiting')) === 0);
    await call(server.url, 'SendMessage', { QueueUrl: url, MessageBody: 'for the next receive' });
    const r = await call(server.url, 'ReceiveMessage', { QueueUrl: url, WaitTimeSeconds: 1 });
    assert.equal((r.body.Messages as { Body: string }[] | undefined)?.[0]?.Body, 'for the next receive');
  });
});

test('SIGTERM answers the waiting long polls of every thread and the server exits', async () => {
  const server = await startServerProcess({ storage: 'memory', args: ['--threads', '2'] });
  try {
    const url = await queue(server, 'draining');
    const polls = Array.from({ length: 4 }, () =>
      call(server.url, 'ReceiveMessage', { QueueUrl: url, WaitTimeSeconds: 20 }),
    );
    await until('the polls wait', async () => (await metric(server.url, 'redrive_long_polls_waiting')) === 4);
    const started = Date.now();
    const exit = server.stop();
    const answers = await Promise.all(polls);
    assert.deepEqual(
      answers.map((a) => [a.status, a.body.Messages]),
      answers.map(() => [200, undefined]),
    );
    assert.equal(await exit, 0);
    assert.ok(Date.now() - started < 10_000, `stopped after ${Date.now() - started} ms`);
    assert.match(server.output(), /"msg":"stopped"/);
  } finally {
    server.cleanup();
  }
});

/** `redrive dlq ...` against a running server (open, manual clock): list, peek, why, redrive, tasks, watch, cancel. */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { SetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { counts, createQueue, receive } from '../e2e/helpers.js';
import { arn, deadLetter, latestTask, redrivePolicy, sourceOf, waitFor } from '../e2e/dlq-helpers.js';
import { cliAt, finished, startCli } from './support.js';

let server: ServerProcess;
let sqs: SQSClient;
let cli: ReturnType<typeof cliAt>;
const url = (name: string) => `${server.url}/000000000000/${name}`;

before(async () => {
  server = await startServerProcess({ storage: 'memory', manualClock: true });
  sqs = server.client();
  cli = cliAt(server.url);
  const a = await sourceOf(sqs, 'orders', 'orders-dlq');
  const b = await sourceOf(sqs, 'payments', 'orders-dlq');
  await deadLetter(sqs, a, ['{"type":"order","id":1}', '{"type":"refund","id":2}']);
  await deadLetter(sqs, b, ['{"type":"order","id":3}']);
});
after(async () => {
  await server.stop();
  server.cleanup();
});

test('list shows each dead-letter queue with its depth and sources, from ListQueueSummaries', async () => {
  const r = await cli('dlq', 'list');
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^DEAD-LETTER QUEUE\s+MESSAGES\s+IN FLIGHT\s+OLDEST\s+SOURCES$/m);
  assert.match(r.stdout, /^orders-dlq\s+3\s+0\s+\d+s\s+orders, payments$/m);
  assert.doesNotMatch(r.stdout, /^orders\s/m, 'a source is not a dead-letter queue');
  assert.doesNotMatch(r.stdout, /redrive-cycles/, 'not while it holds nothing');
  const json = JSON.parse((await cli('dlq', 'list', '--json')).stdout) as {
    queue: string;
    url: string;
    visible: number;
    inflight: number;
    sources: string[];
  }[];
  assert.deepEqual(
    json.map((q) => [q.queue, q.url, q.visible, q.inflight, q.sources]),
    [['orders-dlq', url('orders-dlq'), 3, 0, ['orders', 'payments']]],
  );
});

test('list shows redrive-cycles while it holds a parked message', async () => {
  const b = await createQueue(sqs, 'cycle-b');
  const a = await createQueue(sqs, 'cycle-a', { RedrivePolicy: redrivePolicy('cycle-b') });
  await sqs.send(
    new SetQueueAttributesCommand({ QueueUrl: b, Attributes: { RedrivePolicy: redrivePolicy('cycle-a') } }),
  );
  await deadLetter(sqs, a, ['round and round']);
  while ((await receive(sqs, b, { VisibilityTimeout: 0 })).length);
  assert.equal((await counts(sqs, url('redrive-cycles'))).visible, 1, 'parked');
  const r = await cli('dlq', 'list');
  assert.match(r.stdout, /^redrive-cycles\s+1\s+0\s+\S+\s+\(broken dead-letter cycles\)$/m);
});

test('peek shows messages without receiving them: multi-line bodies indented, FIFO group and dedup ids', async () => {
  const r = await cli('dlq', 'peek', 'orders-dlq', '--limit', '2');
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /received 1x/);
  assert.match(r.stdout, /dead-lettered .* from orders/);
  // One event, one time: the death that the line above dates as the dead-lettering has no second time.
  assert.match(r.stdout, /dead-lettered \S+ from orders\n {2}died 1x in orders: delivery_limit\n/, 'the death history');
  assert.doesNotMatch(r.stdout, / \.\. /);
  assert.match(r.stdout, /body: \{"type":"order","id":1\}/);
  assert.match(r.stdout, /more: redrive dlq peek orders-dlq --from \S+/);
  const filtered = await cli('dlq', 'peek', 'orders-dlq', '--source', 'payments');
  assert.deepEqual(
    [...filtered.stdout.matchAll(/body: (.*)/g)].map((b) => b[1]),
    ['{"type":"order","id":3}'],
    'the server applied the filter',
  );
  const none = await cli('dlq', 'peek', 'orders-dlq', '--death-reason', 'expired');
  assert.equal(none.stdout, 'no messages that match in orders-dlq\n');
  const [m] = await receive(sqs, url('orders-dlq'), {
    VisibilityTimeout: 0,
    MessageSystemAttributeNames: ['ApproximateReceiveCount'],
  });
  assert.equal(m!.Attributes!.ApproximateReceiveCount, '2', 'peek counted no receive');

  await createQueue(sqs, 'events.fifo', { FifoQueue: 'true' });
  assert.equal(
    (await cli('messages', 'send', 'events.fifo', 'first line\nsecond line', '--group', 'customer-7', '--dedup', 'd-1'))
      .code,
    0,
  );
  const fifo = await cli('messages', 'peek', 'events.fifo');
  assert.match(fifo.stdout, /^#\d+ {2}\S+ {2}VISIBLE {2}received 0x {2}group customer-7 {2}dedup d-1$/m);
  assert.match(fifo.stdout, /^ {2}body:\n {4}first line\n {4}second line\n/m);

  const missing = await cli('dlq', 'peek', 'nope');
  assert.equal(missing.code, 1);
  assert.equal(
    missing.stderr,
    'redrive: dead-letter queue "nope" does not exist in this account: check the name with `redrive queues list`\n',
  );
  const verbose = await cli('dlq', 'peek', 'nope', '--verbose');
  assert.match(
    verbose.stderr,
    /\(GetQueueUrl: AWS\.SimpleQueueService\.NonExistentQueue: The specified queue does not exist\.\)/,
  );
});

test('why counts the dead letters by the queue they died in and by reason', async () => {
  const r = await cli('dlq', 'why', 'orders-dlq');
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^DIED IN\s+MESSAGES\s+FIRST\s+LAST$/m);
  assert.match(r.stdout, /^orders\s+2\s/m);
  assert.match(r.stdout, /^payments\s+1\s/m);
  assert.match(r.stdout, /^delivery_limit\s+3\s+received more than maxReceiveCount times$/m);
});

test('redrive errors name the flag or queue and say what to do', async () => {
  const to = await cli('dlq', 'redrive', 'orders-dlq', '--to', 'nope');
  assert.equal(to.code, 1);
  assert.equal(
    to.stderr,
    'redrive: --to "nope" does not exist in this account: check the name with `redrive queues list`\n',
  );
  const source = await cli('dlq', 'redrive', 'orders-dlq', '--source', 'nope');
  assert.match(source.stderr, /^redrive: --source "nope" does not exist/);
  const equals = await cli('dlq', 'redrive', 'orders-dlq', '--equals', 'order');
  assert.equal(
    equals.stderr,
    "redrive: --equals needs --json-path: it compares the value at that path, e.g. --json-path '$.type' --equals order\n",
  );
  const reason = await cli('dlq', 'redrive', 'orders-dlq', '--death-reason', 'tired', '--json');
  assert.equal(JSON.parse(reason.stderr).error.code, 'InvalidFlag');
  const notDlq = await cli('dlq', 'redrive', 'orders');
  assert.equal(
    notDlq.stderr,
    'redrive: "orders" is not a dead-letter queue: no queue names it in its RedrivePolicy (the dead-letter queues are in `redrive dlq list`)\n',
  );
  const itself = await cli('dlq', 'redrive', 'orders-dlq', '--to', 'orders-dlq', '--verbose');
  assert.match(
    itself.stderr,
    /^redrive: --to "orders-dlq" is the dead-letter queue itself: give another queue, or leave --to out\b.*\n {2}\(StartMessageMoveTask: InvalidParameterValue: The destination queue must not be the source queue\.\)\n$/,
  );
  await createQueue(sqs, 'other.fifo', { FifoQueue: 'true' });
  const type = await cli('dlq', 'redrive', 'orders-dlq', '--to', 'other.fifo');
  assert.match(
    type.stderr,
    /^redrive: --to "other\.fifo" is a FIFO queue and "orders-dlq" is not: both must be FIFO, or both standard\n$/,
  );
  const rate = await cli('dlq', 'redrive', 'orders-dlq', '--rate', 'fast');
  assert.match(rate.stderr, /--rate "fast": give a whole number, 1 or more/);

  const html = createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><p>hello</p>'),
  );
  html.listen(0, '127.0.0.1');
  await once(html, 'listening');
  const other = `http://127.0.0.1:${(html.address() as AddressInfo).port}`;
  try {
    const r = await cliAt(other)('dlq', 'list');
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      new RegExp(
        `^redrive: ${other} is not an SQS server: it answered HTTP 200 \\(text/html\\) where SQS answers JSON`,
      ),
    );
  } finally {
    html.closeAllConnections();
    await close(html);
  }
  const down = await cliAt(other)('dlq', 'list');
  assert.equal(
    down.stderr,
    `redrive: cannot reach ${other} (ECONNREFUSED): is \`redrive serve\` running there? Point --endpoint (or REDRIVE_ENDPOINT) at the server\n`,
  );
});

const close = (s: Server) => new Promise((r) => s.close(r));

test('redrive --dry-run with a filter counts; redrive --watch shows progress to the end; tasks shows the filter', async () => {
  const dry = await cli('dlq', 'redrive', 'orders-dlq', '--dry-run', '--json-path', '$.type', '--equals', 'order');
  assert.equal(dry.code, 0, dry.stderr);
  assert.equal(dry.stdout, '2 messages would move ($.type = "order")\n');
  await createQueue(sqs, 'replay');
  const r = await cli(
    'dlq',
    'redrive',
    'orders-dlq',
    '--to',
    'replay',
    '--watch',
    '--json-path',
    '$.type',
    '--equals',
    'order',
  );
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^started task [0-9a-f]{8} \(\$\.type = "order"\)\n/);
  assert.match(r.stdout, /COMPLETED {2}moved 2\/2 \(100%\)\n$/);
  assert.equal((await counts(sqs, url('replay'))).visible, 2);
  const tasks = await cli('dlq', 'tasks', 'orders-dlq');
  assert.match(tasks.stdout, /^ID\s+STARTED\s+STATUS\s+MOVED\s+DESTINATION\s+FILTER$/m);
  assert.match(tasks.stdout, /^-\s+\S+Z\s+COMPLETED\s+2\/2\s+replay\s+\$\.type = "order"$/m);
  // A finished task has no handle in SQS, so no made-up TaskId either.
  const [finished] = JSON.parse((await cli('dlq', 'tasks', 'orders-dlq', '--json')).stdout) as Record<
    string,
    unknown
  >[];
  assert.equal(finished!.Status, 'COMPLETED');
  assert.ok(!('TaskId' in finished!) && !('TaskHandle' in finished!), JSON.stringify(finished));
});

test('a redrive that leaves messages behind says how many and why', async () => {
  await sourceOf(sqs, 'shop', 'shop-dlq');
  await deadLetter(sqs, url('shop'), ['returns home']);
  assert.equal((await cli('messages', 'send', 'shop-dlq', 'sent straight here')).code, 0);
  const r = await cli('dlq', 'redrive', 'shop-dlq', '--watch');
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stdout,
    /COMPLETED {2}moved 1\/2 \(50%\)\n1 message left in shop-dlq:\n {2}1 with no source queue to return to \(sent straight to the dead-letter queue\): redrive them with --to <queue>\n$/,
  );
  const json = await cli('dlq', 'redrive', 'shop-dlq', '--watch', '--json');
  const task = JSON.parse(json.stdout) as {
    Status: string;
    LeftBehind: number;
    LeftBehindReasons: { Count: number }[];
  };
  assert.deepEqual([task.Status, task.LeftBehind, task.LeftBehindReasons[0]!.Count], ['COMPLETED', 1, 1]);
});

test('a rate-limited task: tasks shows a short id, watch re-attaches, Ctrl-C says the task goes on, cancel stops it', async () => {
  await deadLetter(sqs, url('orders'), ['late1', 'late2', 'late3']);
  const start = await cli('dlq', 'redrive', 'orders-dlq', '--rate', '1', '--source', 'orders', '--json');
  assert.equal(start.code, 0, start.stderr);
  const { TaskHandle, TaskId } = JSON.parse(start.stdout) as { TaskHandle: string; TaskId: string };
  assert.match(TaskId, /^[0-9a-f]{8}$/);
  await waitFor(
    () => latestTask(sqs, arn('orders-dlq')),
    (t) => t?.ApproximateNumberOfMessagesMoved === 1,
    'first message',
  );
  const busy = await cli('dlq', 'redrive', 'orders-dlq');
  assert.equal(
    busy.stderr,
    'redrive: a move task is already running on "orders-dlq": follow it with `redrive dlq watch orders-dlq`, or cancel it with `redrive dlq cancel orders-dlq`\n',
  );
  const listed = await cli('dlq', 'tasks', 'orders-dlq');
  assert.match(listed.stdout, new RegExp(`^${TaskId}\\s+\\S+\\s+RUNNING\\s+1/4\\s+\\(sources\\)\\s+from orders$`, 'm'));
  assert.doesNotMatch(
    listed.stdout,
    new RegExp(TaskHandle.slice(0, 20).replace(/[+/=]/g, '\\$&')),
    'no 150-character handle',
  );
  const json = JSON.parse((await cli('dlq', 'tasks', 'orders-dlq', '--json')).stdout) as {
    TaskId: string;
    TaskHandle: string;
    Filter: unknown;
  }[];
  assert.deepEqual(
    [json[0]!.TaskId, json[0]!.TaskHandle, json[0]!.Filter],
    [TaskId, TaskHandle, { DeadLetterQueueSourceArn: arn('orders') }],
  );

  const watching = startCli(['dlq', 'watch', 'orders-dlq', '--endpoint', server.url]);
  const done = finished(watching);
  await new Promise<void>((resolve) =>
    watching.stdout!.on('data', (d: Buffer) => /RUNNING/.test(String(d)) && resolve()),
  );
  watching.kill('SIGINT');
  const w = await done;
  assert.equal(w.code, 130);
  assert.match(w.stdout, /RUNNING {2}moved 1\/4 \(25%\), at most 1\/s/);
  assert.match(
    w.stderr,
    /stopped watching; the task goes on on the server\.\n {2}watch it again: redrive dlq watch orders-dlq\n {2}cancel it: {6}redrive dlq cancel orders-dlq\n/,
  );
  assert.equal((await latestTask(sqs, arn('orders-dlq')))?.Status, 'RUNNING', 'Ctrl-C stopped the watching only');

  const cancelled = await cli('dlq', 'cancel', 'orders-dlq');
  assert.equal(cancelled.code, 0, cancelled.stderr);
  assert.equal(cancelled.stdout, `cancelled task ${TaskId}; 1 message had moved and stay moved\n`);
  const again = await cli('dlq', 'cancel', 'orders-dlq');
  assert.equal(again.code, 1);
  assert.equal(
    again.stderr,
    'redrive: no running move task on "orders-dlq": see its tasks with `redrive dlq tasks orders-dlq`\n',
  );
  const byHandle = await cli('dlq', 'cancel', TaskHandle, '--verbose');
  assert.match(
    byHandle.stderr,
    /Only a task in RUNNING status can be cancelled; this task is CANCELLED\.\n {2}\(CancelMessageMoveTask: InvalidParameterValue\)/,
  );
});

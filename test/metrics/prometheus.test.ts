/**
 * A real Prometheus (Debian's /usr/bin/prometheus) scrapes a real Redrive process on
 * loopback every second with the shipped rules loaded: it sees the queue gauges with the
 * right values, and the shipped dead-letter alert fires once a message is dead-lettered.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import {
  CreateQueueCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { MONITORING } from './scrape.js';
import { needs } from '../support/requirements.js';

// Debian's prometheus package brings promtool and the server alike: one skip group.
const skip = needs('promtool').skip;

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as { port: number };
  await new Promise((resolve) => s.close(resolve));
  return port;
}

/** Polls `probe` every 250 ms until it returns something, for up to `ms`. */
async function eventually<T>(what: string, probe: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const until = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > until) throw new Error(`${what}: not seen within ${ms} ms${last ? ` (${last})` : ''}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

let redrive: ServerProcess;
let prometheus: ChildProcess;
let promUrl: string;
let dir: string;
let promLog = '';

before(async () => {
  if (skip) return;
  redrive = await startServerProcess({});
  dir = mkdtempSync(join(tmpdir(), 'redrive-prometheus-'));
  const target = new URL(redrive.url).host;
  writeFileSync(
    join(dir, 'prometheus.yml'),
    [
      'global: { scrape_interval: 1s, evaluation_interval: 1s }',
      `rule_files: ['${join(MONITORING, 'redrive-alerts.yml')}']`,
      'scrape_configs:',
      `  - { job_name: redrive, static_configs: [ { targets: ['${target}'] } ] }`,
    ].join('\n'),
  );
  const port = await freePort();
  promUrl = `http://127.0.0.1:${port}`;
  prometheus = spawn(
    '/usr/bin/prometheus',
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  prometheus.stdout!.on('data', (d) => (promLog += d));
  prometheus.stderr!.on('data', (d) => (promLog += d));
  await eventually('Prometheus ready', async () => ((await fetch(`${promUrl}/-/ready`)).ok ? true : undefined)).catch(
    (e) => {
      throw new Error(`${e.message}\n${promLog}`);
    },
  );
});

after(async () => {
  if (prometheus) {
    prometheus.kill('SIGTERM');
    await new Promise((resolve) => (prometheus.exitCode !== null ? resolve(null) : prometheus.once('exit', resolve)));
  }
  await redrive?.stop();
  redrive?.cleanup();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function query(expr: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]> {
  const res = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
  const body = (await res.json()) as {
    status: string;
    data: { result: { metric: Record<string, string>; value: [number, string] }[] };
  };
  assert.equal(body.status, 'success');
  return body.data.result;
}

test('Prometheus sees the queue gauges, and the dead-letter alert fires', needs('promtool'), async () => {
  const sqs = redrive.client();
  await sqs.send(new CreateQueueCommand({ QueueName: 'prom-dlq' }));
  const src = (
    await sqs.send(
      new CreateQueueCommand({
        QueueName: 'prom-orders',
        Attributes: {
          RedrivePolicy: JSON.stringify({
            deadLetterTargetArn: 'arn:aws:sqs:us-east-1:000000000000:prom-dlq',
            maxReceiveCount: 1,
          }),
        },
      }),
    )
  ).QueueUrl!;
  await sqs.send(
    new SendMessageBatchCommand({
      QueueUrl: src,
      Entries: [1, 2, 3].map((i) => ({ Id: `m${i}`, MessageBody: `order ${i}` })),
    }),
  );
  await sqs.send(new SendMessageCommand({ QueueUrl: src, MessageBody: 'later', DelaySeconds: 900 }));

  const gauge = (name: string, queue: string) =>
    eventually(
      `${name} of ${queue}`,
      async () => (await query(`${name}{job="redrive",queue_name="${queue}"}`))[0]?.value[1],
    );
  await eventually('3 visible, 1 delayed in prom-orders', async () => {
    const [visible, delayed] = await Promise.all([
      query('redrive_approximate_number_of_messages_visible{queue_name="prom-orders"}'),
      query('redrive_approximate_number_of_messages_delayed{queue_name="prom-orders"}'),
    ]);
    return visible[0]?.value[1] === '3' && delayed[0]?.value[1] === '1' ? true : undefined;
  });
  assert.equal(await gauge('redrive_number_of_messages_sent_total', 'prom-orders'), '4');
  assert.equal(await gauge('redrive_dead_letter_queue_sources', 'prom-dlq'), '1');

  // One message received twice with no visibility timeout: the second receive dead-letters it.
  const first = await sqs.send(new ReceiveMessageCommand({ QueueUrl: src, VisibilityTimeout: 0 }));
  assert.equal(first.Messages?.length, 1);
  await sqs.send(new ReceiveMessageCommand({ QueueUrl: src, VisibilityTimeout: 30, MaxNumberOfMessages: 10 }));

  const alert = await eventually('RedriveMessagesDeadLettered firing', async () => {
    const res = await fetch(`${promUrl}/api/v1/alerts`);
    const body = (await res.json()) as { data: { alerts: { labels: Record<string, string>; state: string }[] } };
    return body.data.alerts.find((a) => a.labels.alertname === 'RedriveMessagesDeadLettered' && a.state === 'firing');
  });
  assert.deepEqual(
    { queue: alert.labels.queue_name, dlq: alert.labels.dead_letter_queue, reason: alert.labels.reason },
    { queue: 'prom-orders', dlq: 'prom-dlq', reason: 'delivery_limit' },
  );
  assert.equal(await gauge('redrive_approximate_number_of_messages_visible', 'prom-dlq'), '1');
  // The move is not a send: the DLQ has no sent series at all, as nothing was sent to it.
  assert.deepEqual(await query('redrive_number_of_messages_sent_total{queue_name="prom-dlq"}'), []);
});

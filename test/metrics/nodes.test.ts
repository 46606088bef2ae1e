/**
 * The counters on every store, and on two server processes sharing one PostgreSQL
 * database: each node counts what it served under its own `node` label, so the sum over
 * the nodes is the whole, while the queue gauges, read from the database, agree.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { createTestDatabase, type TestDatabase } from '../support/postgres.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { samples, single, total } from './scrape.js';

const started: ServerProcess[] = [];
const databases: TestDatabase[] = [];

after(async () => {
  for (const s of started) {
    await s.stop();
    s.cleanup();
  }
  for (const db of databases) await db.drop();
});

async function serve(storage: string, nodeId: string): Promise<ServerProcess> {
  const s = await startServerProcess({ storage, args: ['--node-id', nodeId] });
  started.push(s);
  return s;
}

async function postgresUrl(): Promise<string> {
  const db = await createTestDatabase();
  databases.push(db);
  return db.url;
}

const scrape = async (s: ServerProcess) => (await fetch(`${s.url}/metrics`)).text();
const q = (name: string) => ({ queue_name: name, account_id: '000000000000', region: 'us-east-1' });

async function receive(sqs: SQSClient, QueueUrl: string, max: number) {
  return (
    (await sqs.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: max, VisibilityTimeout: 60 })))
      .Messages ?? []
  );
}

for (const storage of ['sqlite', 'memory', 'postgres']) {
  test(`${storage}: the counters and gauges of one node`, async () => {
    const s = await serve(storage === 'postgres' ? await postgresUrl() : storage, `${storage}-node`);
    const sqs = s.client();
    const url = (await sqs.send(new CreateQueueCommand({ QueueName: 'counted' }))).QueueUrl!;
    const empty = (await sqs.send(new CreateQueueCommand({ QueueName: 'empty' }))).QueueUrl!;
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: url,
        Entries: [1, 2, 3, 4, 5].map((i) => ({ Id: `m${i}`, MessageBody: 'x'.repeat(i * 100) })),
      }),
    );
    for (const body of ['a', 'b']) await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: body }));
    const got: { ReceiptHandle?: string }[] = [];
    while (got.length < 3) got.push(...(await receive(sqs, url, 3 - got.length)));
    for (const m of got.slice(0, 2))
      await sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: m.ReceiptHandle }));
    assert.equal((await receive(sqs, empty, 1)).length, 0);

    const text = await scrape(s);
    const node = { ...q('counted'), node: `${storage}-node` };
    assert.equal(single(text, 'redrive_number_of_messages_sent_total', node), 7);
    assert.equal(single(text, 'redrive_number_of_messages_received_total', node), 3);
    assert.equal(single(text, 'redrive_number_of_messages_deleted_total', node), 2);
    assert.equal(single(text, 'redrive_number_of_empty_receives_total', { ...q('empty'), node: `${storage}-node` }), 1);
    assert.equal(single(text, 'redrive_sent_message_size_bytes_sum', node), 1500 + 2);
    assert.equal(single(text, 'redrive_approximate_number_of_messages_visible', q('counted')), 4);
    assert.equal(single(text, 'redrive_approximate_number_of_messages_not_visible', q('counted')), 1);
    assert.equal(single(text, 'redrive_approximate_number_of_messages_visible', q('empty')), 0);
    // The store's own figures: the group commit on SQLite, the pool on PostgreSQL.
    if (storage === 'postgres') assert.ok(single(text, 'redrive_postgres_pool_max_connections') >= 1);
    else assert.ok(single(text, 'redrive_group_commit_batch_size_count') >= 7);
  });
}

test('two nodes on one PostgreSQL database: counters sum across nodes, gauges agree', async () => {
  const url = await postgresUrl();
  const [a, b] = [await serve(url, 'node-a'), await serve(url, 'node-b')];
  const [sa, sb] = [a.client(), b.client()];
  const qa = (await sa.send(new CreateQueueCommand({ QueueName: 'shared' }))).QueueUrl!;
  const qb = qa.replace(a.url, b.url);
  for (let i = 0; i < 3; i++) await sa.send(new SendMessageCommand({ QueueUrl: qa, MessageBody: `a${i}` }));
  for (let i = 0; i < 2; i++) await sb.send(new SendMessageCommand({ QueueUrl: qb, MessageBody: `b${i}` }));
  const got: { ReceiptHandle?: string }[] = [];
  while (got.length < 2) got.push(...(await receive(sb, qb, 2 - got.length)));
  // A receipt handle from node B deletes on node A: the delete is A's.
  await sa.send(new DeleteMessageCommand({ QueueUrl: qa, ReceiptHandle: got[0]!.ReceiptHandle }));

  const [ta, tb] = await Promise.all([scrape(a), scrape(b)]);
  const both = [
    ...samples(ta, 'redrive_number_of_messages_sent_total', q('shared')),
    ...samples(tb, 'redrive_number_of_messages_sent_total', q('shared')),
  ];
  assert.deepEqual(
    both.map((s) => [s.labels.node, s.value]),
    [
      ['node-a', 3],
      ['node-b', 2],
    ],
  );
  const sum = (name: string) => total(ta, name, q('shared')) + total(tb, name, q('shared'));
  assert.equal(sum('redrive_number_of_messages_sent_total'), 5);
  assert.equal(sum('redrive_number_of_messages_received_total'), 2);
  assert.equal(sum('redrive_number_of_messages_deleted_total'), 1);
  assert.equal(single(ta, 'redrive_number_of_messages_deleted_total', { ...q('shared'), node: 'node-a' }), 1);
  assert.equal(single(tb, 'redrive_number_of_messages_received_total', { ...q('shared'), node: 'node-b' }), 2);
  for (const name of [
    'redrive_approximate_number_of_messages_visible',
    'redrive_approximate_number_of_messages_not_visible',
  ]) {
    assert.equal(single(ta, name, q('shared')), single(tb, name, q('shared')), `${name} is the same on both nodes`);
  }
  assert.equal(single(ta, 'redrive_approximate_number_of_messages_visible', q('shared')), 3);
  assert.equal(single(tb, 'redrive_approximate_number_of_messages_not_visible', q('shared')), 1);
});

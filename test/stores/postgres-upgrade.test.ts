/**
 * A PostgreSQL database made by an earlier release opens under this one with nothing lost
 * (upgrade-cases.ts). The fixture (made by make-postgres-fixture.mjs with the build of
 * 5f09973, schema 14) is a plain SQL dump, loaded into a fresh database for each case.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, test } from 'node:test';
import { GetQueueAttributesCommand, GetQueueUrlCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import pg from 'pg';
import { postgresMigrations } from '../../src/stores/postgres/migrate.js';
import { PostgresStore } from '../../src/stores/postgres/store.js';
import { createTestDatabase, type TestDatabase } from '../support/postgres.js';
import { sqsClient, startServerProcess } from '../support/server-process.js';
import { upgradeCases, type Snapshot } from './upgrade-cases.js';

const fixture = (name: string) => new URL(`../../../test/stores/fixtures/${name}`, import.meta.url);
const snapshot = JSON.parse(readFileSync(fixture('postgres-5f09973.json'), 'utf8')) as Snapshot;
// psql's own commands (\restrict) are not SQL; the rest runs as one simple query.
const dump = readFileSync(fixture('postgres-5f09973.sql'), 'utf8')
  .split('\n')
  .filter((l) => !l.startsWith('\\'))
  .join('\n');

const databases: TestDatabase[] = [];
after(() => Promise.all(databases.map((db) => db.drop())));

/** A fresh database holding the fixture; `shift` moves every time in it later by that many milliseconds. */
async function loadFixture(shift = 0): Promise<string> {
  const db = await createTestDatabase();
  databases.push(db);
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  try {
    await c.query(dump);
    if (shift)
      await c.query(
        // The dump empties the session's search_path.
        `RESET search_path;
         UPDATE messages SET sent_at = sent_at + $1, visible_at = visible_at + $1, received_at = received_at + $1,
           first_received_at = first_received_at + $1, expires_at = expires_at + $1, dead_lettered_at = dead_lettered_at + $1;
         UPDATE fifo_groups SET available_at = available_at + $1;
         UPDATE fifo_dedup SET expires_at = expires_at + $1;
         UPDATE receive_attempts SET expires_at = expires_at + $1;`.replaceAll('$1', String(shift)),
      );
  } finally {
    await c.end();
  }
  return db.url;
}

const openUpgraded = async () => PostgresStore.open({ url: await loadFixture(), defaultRegion: 'us-east-1' });

test('the database of 5f09973 is migrated to the latest schema: one delivery row per message, sent rows kept', async () => {
  const url = await loadFixture();
  const store = await PostgresStore.open({ url, defaultRegion: 'us-east-1' });
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await store.maintenance.ready();
    const { rows } = await c.query<{ version: number }>('SELECT max(version)::int AS version FROM redrive_migrations');
    assert.equal(rows[0]!.version, postgresMigrations().length);
    const stored = Object.values(snapshot.queues).flatMap((q) => q.messages).length;
    const count = async (sql: string) => (await c.query<{ n: number }>(sql)).rows[0]!.n;
    assert.equal(await count('SELECT count(*)::int AS n FROM messages'), stored);
    assert.equal(await count('SELECT count(*)::int AS n FROM deliveries'), stored);
    assert.equal(
      await count('SELECT count(*)::int AS n FROM deliveries d JOIN messages m USING (seq, queue_id)'),
      stored,
    );
  } finally {
    await c.end();
    await store.close();
  }
});

upgradeCases(snapshot, openUpgraded);

test("today's server starts on the database of 5f09973 and serves its messages: counts, attributes, receive counts, visibility", async () => {
  const T = 1_700_000_000_000;
  // The server's clock starts now; the fixture's times move with it, as if written just before.
  const shift = Date.now() - T - 100;
  const server = await startServerProcess({ storage: await loadFixture(shift), manualClock: true });
  try {
    // The fixture's MD5s are placeholders (fixture-scenario.mjs): the SDK must not check them.
    const sqs = sqsClient(server.url, { md5: false });
    const now = await server.advanceClock(0);
    const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: 'plain' }));
    const q = snapshot.queues.plain!.messages.map((m) => ({ ...m, visibleAt: m.visibleAt + shift }));
    const hidden = q.filter((m) => m.visibleAt > now);
    const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['All'] }));
    assert.deepEqual(
      [
        Attributes?.ApproximateNumberOfMessages,
        Attributes?.ApproximateNumberOfMessagesNotVisible,
        Attributes?.ApproximateNumberOfMessagesDelayed,
      ],
      [
        q.length - hidden.length,
        hidden.filter((m) => m.receiveCount > 0).length,
        hidden.filter((m) => m.receiveCount === 0).length,
      ].map(String),
    );
    const receive = () =>
      sqs.send(
        new ReceiveMessageCommand({
          QueueUrl,
          MaxNumberOfMessages: 10,
          VisibilityTimeout: 3600,
          MessageAttributeNames: ['All'],
          MessageSystemAttributeNames: ['All'],
        }),
      );
    const first = (await receive()).Messages ?? [];
    assert.deepEqual(
      first.map((m) => m.MessageId).sort(),
      q
        .filter((m) => m.visibleAt <= now)
        .map((m) => m.messageId)
        .sort(),
    );
    // Past every visibility window and delay of the fixture: the rest come back.
    await server.advanceClock(200_000);
    const rest = (await receive()).Messages ?? [];
    const got = new Map([...first, ...rest].map((m) => [m.MessageId, m]));
    assert.equal(got.size, q.length);
    for (const m of q) {
      const r = got.get(m.messageId)!;
      assert.equal(r.Body, m.body);
      assert.equal(
        r.Attributes?.ApproximateReceiveCount,
        String(m.receiveCount + 1),
        `${m.messageId} received once more`,
      );
      assert.deepEqual(
        Object.entries(r.MessageAttributes ?? {}).map(([k, v]) => [k, v.DataType, v.StringValue]),
        Object.entries(m.attributes ?? {}).map(([k, v]) => [k, v.DataType, v.StringValue]),
      );
    }
  } finally {
    await server.stop();
    server.cleanup();
  }
});

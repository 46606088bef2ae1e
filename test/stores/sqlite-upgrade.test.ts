/**
 * A database made by an earlier release opens under this one with nothing lost: the
 * fixture (made by make-sqlite-fixture.mjs with the build of 5f09973, schema 14) is
 * migrated, and every message reads back as that release read it, with its attributes,
 * receive counts, receipts and deaths; receipts issued before the upgrade still work;
 * deduplication ids, receive attempts and the move task survive; and no position is
 * handed out twice.
 */
import assert from 'node:assert/strict';
import { copyFileSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { newReceiptToken } from '../../src/engine/messages/receipt.js';
import type { StoredMessage } from '../../src/engine/kernel/types.js';
import { sqliteMigrations } from '../../src/stores/sqlite/migrate.js';
import { SqliteStore } from '../../src/stores/sqlite/store.js';
import { tempFile } from './harness.js';
import { messageCounts } from '../../src/engine/store/messages.js';

const fixture = (name: string) => new URL(`../../../test/stores/fixtures/${name}`, import.meta.url);
interface Snapshot {
  queues: Record<string, { id: number; messages: StoredMessage[] }>;
  moveTasks: unknown[];
}
const snapshot = JSON.parse(readFileSync(fixture('sqlite-5f09973.json'), 'utf8')) as Snapshot;
const T = 1_700_000_000_000;
/** As JSON has them: the snapshot was written with JSON.stringify. */
const plain = (v: unknown) => JSON.parse(JSON.stringify(v)) as unknown;

function openUpgraded(): SqliteStore {
  const path = tempFile('redrive.db');
  copyFileSync(fixture('sqlite-5f09973.db'), path);
  return new SqliteStore({ path });
}

test('a database of 5f09973 upgrades with every message, attribute, receive count, receipt and death kept', async () => {
  const store = openUpgraded();
  try {
    assert.equal(await store.maintenance.ready().then(() => sqliteMigrations().length), 15);
    assert.equal(Object.values(snapshot.queues).flatMap((q) => q.messages).length, 10);
    for (const [name, q] of Object.entries(snapshot.queues)) {
      assert.deepEqual(plain(await store.messages.peek(q.id, 0, 1000)), q.messages, `the messages of ${name}`);
    }
    const dlq = snapshot.queues['plain-dlq']!;
    assert.ok(dlq.messages.every((m) => m.deaths?.length === 1 && m.deadLetterSourceArn));
    assert.deepEqual(
      (await store.deadLetters.breakdown(dlq.id)).map((r) => [r.reason, r.count]),
      [['delivery_limit', 2]],
    );
    assert.deepEqual(plain(await store.moveTasks.list(dlq.id, 10)), snapshot.moveTasks);
    assert.equal(snapshot.moveTasks.length, 1);
    const q = snapshot.queues.plain!;
    const now = T + 100;
    const hidden = q.messages.filter((m) => m.visibleAt > now);
    assert.deepEqual(await messageCounts(store.messages, q.id, now), {
      visible: q.messages.length - hidden.length,
      inflight: hidden.filter((m) => m.receiveCount > 0).length,
      delayed: hidden.filter((m) => m.receiveCount === 0).length,
    });
  } finally {
    await store.close();
  }
});

test('receipts, receive attempts and deduplication ids from before the upgrade still hold', async () => {
  const store = openUpgraded();
  try {
    const fifo = snapshot.queues['ordered.fifo']!;
    const held = fifo.messages.find((m) => m.receiptToken !== null)!;
    const replay = await store.messages.receive(fifo.id, {
      now: T + 80,
      max: 1,
      visibilityTimeoutMs: 30_000,
      retentionCutoff: 0,
      newToken: newReceiptToken,
      fifo: true,
      attemptId: 'attempt-1',
    });
    assert.deepEqual(
      replay.messages.map((m) => [m.seq, m.receiptToken]),
      [[held.seq, held.receiptToken]],
      'the attempt replays the same receipt',
    );
    const dup = await store.messages.send(fifo.id, [
      {
        messageId: 'again',
        body: 'again',
        md5OfBody: 'x',
        senderId: 's',
        sentAt: T + 90,
        visibleAt: T + 90,
        groupId: 'g1',
        dedupId: 'd2',
        dedupScope: 'queue',
        dedupUntil: T + 400_000,
      },
    ]);
    assert.equal(dup.messages[0]!.duplicate, true);
    assert.equal(dup.messages[0]!.messageId, fifo.messages.find((m) => m.dedupId === 'd2')!.messageId);
    assert.deepEqual(
      await store.messages.delete(fifo.id, [{ seq: held.seq, token: held.receiptToken! }], {
        now: T + 100,
        requireCurrent: true,
      }),
      ['ok'],
      'the FIFO receipt issued before the upgrade deletes',
    );
    const q = snapshot.queues.plain!;
    const inflight = q.messages.filter((m) => m.receiptToken !== null && m.visibleAt > T + 100);
    assert.ok(inflight.length > 0);
    assert.deepEqual(
      await store.messages.changeVisibility(
        q.id,
        inflight.map((m) => ({
          seq: m.seq,
          token: m.receiptToken!,
          visibilityTimeoutMs: 0,
          maxSinceReceiveMs: 43_200_000,
          requireCurrent: true,
        })),
        T + 100,
      ),
      inflight.map(() => 'ok'),
    );
  } finally {
    await store.close();
  }
});

test('positions continue above every one used before the upgrade, deleted ones included', async () => {
  const store = openUpgraded();
  const used = Math.max(...Object.values(snapshot.queues).flatMap((q) => q.messages.map((m) => m.seq)));
  try {
    const q = snapshot.queues.plain!;
    const sent = await store.messages.send(q.id, [
      { messageId: 'new', body: 'new', md5OfBody: 'x', senderId: 's', sentAt: T + 200, visibleAt: T + 200 },
    ]);
    // The fixture's last send was deleted, so its position is above every stored one.
    assert.ok(sent.messages[0]!.seq > used + 1, `${sent.messages[0]!.seq} after ${used}`);
  } finally {
    await store.close();
  }
});

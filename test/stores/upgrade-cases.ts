/**
 * What an upgrade from an earlier release must keep, for either SQL store: the fixture (a
 * database made by fixtures/fixture-scenario.mjs with the build of 5f09973) is opened by
 * this release's store, and every message reads back as that release read it, with its
 * attributes, receive counts, receipts and deaths; receipts issued before the upgrade
 * still work; deduplication ids, receive attempts and the move task survive; and no
 * position is handed out twice.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newReceiptToken } from '../../src/engine/messages/receipt.js';
import type { Store } from '../../src/engine/store/store.js';
import type { StoredMessage } from '../../src/engine/kernel/types.js';
import { messageCounts } from '../../src/engine/store/messages.js';

/** What the old release's store read back from the fixture (written with JSON.stringify). */
export interface Snapshot {
  queues: Record<string, { id: number; messages: StoredMessage[] }>;
  moveTasks: unknown[];
}
const T = 1_700_000_000_000;
/** As JSON has them. */
const plain = (v: unknown) => JSON.parse(JSON.stringify(v)) as unknown;

/** The upgrade cases, each on a store freshly opened on its own copy of the fixture. */
export function upgradeCases(snapshot: Snapshot, open: () => Promise<Store>): void {
  test('a database of 5f09973 upgrades with every message, attribute, receive count, receipt and death kept', async () => {
    const store = await open();
    try {
      await store.maintenance.ready();
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
    const store = await open();
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
    const store = await open();
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

  test('in-flight messages come back when their visibility ends, delayed ones when their delay does, counts raised', async () => {
    const store = await open();
    try {
      const q = snapshot.queues.plain!;
      const req = (now: number) => ({
        now,
        max: 10,
        visibilityTimeoutMs: 1_000_000_000,
        retentionCutoff: 0,
        newToken: newReceiptToken,
      });
      const seen = new Map<number, StoredMessage>();
      // Each step takes what has become visible by then: the fixture's visibility times, in order.
      for (const at of [...new Set(q.messages.map((m) => Math.max(m.visibleAt, T + 100)))].sort((a, b) => a - b)) {
        const got = await store.messages.receive(q.id, req(at));
        for (const m of got.messages) seen.set(m.seq, m);
        assert.deepEqual(
          got.messages.map((m) => m.seq).sort(),
          q.messages
            .filter((m) => Math.max(m.visibleAt, T + 100) === at)
            .map((m) => m.seq)
            .sort(),
          `what is visible at ${at - T}`,
        );
      }
      for (const m of q.messages) {
        assert.equal(seen.get(m.seq)?.receiveCount, m.receiveCount + 1, `message ${m.seq} received once more`);
        assert.equal(seen.get(m.seq)?.body, m.body);
      }
    } finally {
      await store.close();
    }
  });
}

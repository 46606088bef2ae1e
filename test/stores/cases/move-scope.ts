import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import type { QueueAddress } from '../../../src/engine/kernel/addressing.js';
import type { QueueRecord } from '../../../src/engine/kernel/types.js';
import type { MoveBatch, MoveTaskRecord, Store } from '../../../src/engine/store/store.js';
import { makeQueue, newMessage, useStore, type CaseGroup } from '../harness.js';

const T = 1_700_000_000_000;
const LEASE = 15_000;
const OWNER = '111111111111';
const OTHER = '222222222222';

const address = (q: Pick<QueueRecord, 'accountId' | 'region' | 'name'>): QueueAddress => ({
  accountId: q.accountId,
  region: q.region,
  name: q.name,
});

/** A batch sending each message where its body says: the body is the destination's address as JSON. */
function batch(now: number, overrides: Partial<MoveBatch> = {}): MoveBatch {
  return {
    owner: 'a',
    now,
    leaseUntil: now + LEASE,
    limit: 10,
    scanLimit: 100,
    matches: () => true,
    destination: (m) => JSON.parse(m.body) as QueueAddress,
    rewrite: (m) => ({ ...newMessage(now, { body: m.body, groupId: m.groupId, dedupId: m.dedupId }), receiveCount: 0 }),
    missingQueueReason: 'gone',
    ...overrides,
  };
}

async function started(store: Store, source: QueueRecord): Promise<MoveTaskRecord> {
  const task = await store.moveTasks.create(
    {
      id: randomUUID(),
      accountId: source.accountId,
      sourceQueueId: source.id,
      sourceArn: `arn:${source.name}`,
      startedAt: T,
    },
    100,
  );
  assert.ok(typeof task === 'object');
  await store.moveTasks.lease('a', T, T + LEASE);
  return task;
}

const depth = async (store: Store, q: QueueRecord) => (await store.messages.peek(q.id, 0, 100)).length;

/**
 * A move task writes only into its owner's account and region, and a queue of its
 * source's type, whatever address a message or the task names (another account's queue
 * reached through an imported or forged source ARN):
 * every other queue is, to the task, a queue that does not exist. Checked at every batch.
 */
export const moveScopeCases: CaseGroup = (open) => {
  describe('move task scope', () => {
    const store = useStore(open);

    for (const [what, target] of [
      ['another account', { accountId: OTHER }],
      ['another region', { region: 'eu-west-1' }],
      ['the other type', { fifo: true }],
    ] as [string, Partial<QueueRecord>][]) {
      test(`a destination in ${what} fails the task there, and the message stays in the DLQ`, async () => {
        const dlq = await makeQueue(store(), { accountId: OWNER });
        const home = await makeQueue(store(), { accountId: OWNER });
        const foreign = await makeQueue(store(), { accountId: OWNER, ...target });
        await store().messages.send(dlq.id, [
          newMessage(T, { body: JSON.stringify(address(home)) }),
          newMessage(T, { body: JSON.stringify(address(foreign)), groupId: 'g', dedupId: 'd' }),
        ]);
        const task = await started(store(), dlq);
        const r = await store().moveTasks.runBatch(task.id, batch(T + 1));
        assert.equal(r.task.status, 'FAILED');
        assert.equal(r.task.failureReason, 'gone');
        assert.equal(r.moved, 1, 'the message before it moved');
        assert.equal(await depth(store(), home), 1);
        assert.equal(await depth(store(), foreign), 0, `nothing written into ${what}`);
        assert.equal(await depth(store(), dlq), 1, 'the refused message stays');
        const [stays] = await store().messages.peek(dlq.id, 0, 1);
        assert.equal(
          r.failedAt?.messageId,
          stays!.messageId,
          'the result names the message it stopped at, for the log',
        );
      });
    }

    test('the check runs at every batch: a destination deleted and recreated as the other type is refused', async () => {
      const dlq = await makeQueue(store(), { accountId: OWNER });
      const dest = await makeQueue(store(), { accountId: OWNER });
      await store().messages.send(
        dlq.id,
        [1, 2].map(() => newMessage(T, { body: JSON.stringify(address(dest)) })),
      );
      const task = await started(store(), dlq);
      assert.equal((await store().moveTasks.runBatch(task.id, batch(T + 1, { limit: 1 }))).moved, 1);
      await store().queues.delete(dest.id);
      const again = await makeQueue(store(), { accountId: OWNER, name: dest.name, fifo: true });
      const r = await store().moveTasks.runBatch(task.id, batch(T + 2, { limit: 1 }));
      assert.equal(r.task.status, 'FAILED');
      assert.equal(await depth(store(), again), 0);
      assert.equal(await depth(store(), dlq), 1);
    });

    test("a queue of the same name in another account is not taken for the owner's own", async () => {
      const dlq = await makeQueue(store(), { accountId: OWNER });
      const name = `shared-${randomUUID()}`;
      const theirs = await makeQueue(store(), { accountId: OTHER, name });
      await store().messages.send(dlq.id, [
        newMessage(T, { body: JSON.stringify({ accountId: OWNER, region: theirs.region, name }) }),
      ]);
      const task = await started(store(), dlq);
      const r = await store().moveTasks.runBatch(task.id, batch(T + 1));
      assert.equal(r.task.status, 'FAILED', 'the owner has no queue of that name');
      assert.equal(await depth(store(), theirs), 0);
    });

    test('a batch stops examining messages once their bodies reach scanBytes, and resumes after them', async () => {
      const dlq = await makeQueue(store(), { accountId: OWNER });
      const dest = await makeQueue(store(), { accountId: OWNER });
      const body = JSON.stringify(address(dest));
      await store().messages.send(
        dlq.id,
        [1, 2, 3].map(() => newMessage(T, { body })),
      );
      const task = await started(store(), dlq);
      const r1 = await store().moveTasks.runBatch(task.id, batch(T + 1, { scanBytes: body.length * 2 }));
      assert.equal(r1.moved, 2);
      assert.equal(r1.task.status, 'RUNNING', 'stopped by the budget, not finished');
      const r2 = await store().moveTasks.runBatch(task.id, batch(T + 2, { scanBytes: body.length * 2 }));
      assert.equal(r2.task.status, 'COMPLETED');
      assert.equal(await depth(store(), dest), 3);
    });
  });
};

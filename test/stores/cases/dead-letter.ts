import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import type { QueueRecord, StoredMessage } from '../../../src/engine/kernel/types.js';
import type { DeadLetterRule, MoveBatch, Store } from '../../../src/engine/store/store.js';
import { makeQueue, newMessage, receiveRequest, useStore, type CaseGroup } from '../harness.js';

const T = 1_700_000_000_000;
const LEASE = 15_000;

function deadLetterTo(dlq: QueueRecord, maxReceiveCount: number): DeadLetterRule {
  return {
    queueId: dlq.id,
    maxReceiveCount,
    reason: 'delivery_limit',
    arrival: (m: StoredMessage) => ({
      kind: 'move',
      sentAt: m.sentAt,
      dedupId: m.dedupId,
      deadLetterSourceArn: `arn:source:${m.queueId}`,
    }),
  };
}

/** A batch that sends every message to `dest`, as a new message sent at `now`. */
function batch(
  owner: string,
  now: number,
  dest: QueueRecord | undefined,
  overrides: Partial<MoveBatch> = {},
): MoveBatch {
  return {
    owner,
    now,
    leaseUntil: now + LEASE,
    limit: 10,
    scanLimit: 100,
    matches: () => true,
    destination: () => dest && { accountId: dest.accountId, region: dest.region, name: dest.name },
    rewrite: (m) => ({ ...newMessage(now, { body: m.body }), receiveCount: 0 }),
    missingQueueReason: 'gone',
    ...overrides,
  };
}

async function newTask(store: Store, source: QueueRecord, maxActive = 100, toMove?: number) {
  return store.moveTasks.create(
    {
      id: randomUUID(),
      accountId: source.accountId,
      sourceQueueId: source.id,
      sourceArn: `arn:${source.name}`,
      startedAt: T,
      toMove,
    },
    maxActive,
  );
}

async function bodies(store: Store, q: QueueRecord): Promise<string[]> {
  return (await store.messages.peek(q.id, 0, 1000)).map((m) => m.body);
}

export const deadLetterCases: CaseGroup = (open) => {
  describe('dead letters and moves', () => {
    const store = useStore(open);

    for (const fifo of [false, true]) {
      test(`a ${fifo ? 'FIFO' : 'standard'} queue that is its own DLQ takes the message back once, with the count the arrival gives`, async () => {
        const q = await makeQueue(store(), { fifo });
        const g = fifo ? { groupId: 'g', dedupId: 'd' } : {};
        await store().messages.send(q.id, [newMessage(T, { body: 'self', ...g })]);
        const self: DeadLetterRule = {
          ...deadLetterTo(q, 1),
          arrival: (m) => ({ kind: 'move', sentAt: m.sentAt, deadLetterSourceArn: 'arn:self', receiveCount: 0 }),
        };
        const req = (now: number) => receiveRequest(now, { max: 10, visibilityTimeoutMs: 0, deadLetter: self, fifo });
        await store().messages.receive(q.id, req(T + 1));
        const r = await store().messages.receive(q.id, req(T + 2));
        assert.equal(r.deadLettered.length, 1, 'moved once');
        assert.equal(r.deadLettered[0]!.to, q.id);
        // A standard receive may hand it out in the same call; a FIFO one on the next.
        const got = r.messages.length ? r.messages : (await store().messages.receive(q.id, req(T + 3))).messages;
        assert.deepEqual(
          got.map((m) => [m.body, m.receiveCount]),
          [['self', 1]],
        );
        assert.equal((await store().messages.peek(q.id, 0, 10)).length, 1, 'one copy');
      });
    }

    test('receive moves a message past maxReceiveCount into the DLQ in the same step', async () => {
      const src = await makeQueue(store());
      const dlq = await makeQueue(store());
      const {
        messages: [m],
      } = await store().messages.send(src.id, [newMessage(T, { body: 'poison', dedupId: 'd' })]);
      const rule = deadLetterTo(dlq, 2);
      for (let i = 0; i < 2; i++)
        await store().messages.receive(
          src.id,
          receiveRequest(T + 10 + i, { max: 1, visibilityTimeoutMs: 0, deadLetter: rule }),
        );
      await store().messages.send(src.id, [newMessage(T + 15, { body: 'fine' })]);
      const r = await store().messages.receive(
        src.id,
        receiveRequest(T + 20, { max: 1, visibilityTimeoutMs: 0, deadLetter: rule }),
      );
      assert.deepEqual(r.deadLettered, [
        { kind: 'moved', messageId: m!.messageId, from: src.id, to: dlq.id, reason: 'delivery_limit' },
      ]);
      assert.deepEqual(
        r.messages.map((x) => x.body),
        ['fine'],
        'the freed place is filled',
      );
      const [moved] = await store().messages.peek(dlq.id, 0, 10);
      assert.equal(moved!.messageId, m!.messageId);
      assert.equal(moved!.sentAt, T);
      assert.equal(moved!.deadLetterSourceArn, `arn:source:${src.id}`);
      assert.equal(moved!.deadLetteredAt, T + 20);
      assert.equal(moved!.visibleAt, T + 20);
      assert.equal(moved!.receiptToken, null);
      assert.deepEqual(await bodies(store(), src), ['fine']);
    });

    test('peekMessages pages by position and changes nothing', async () => {
      const q = await makeQueue(store());
      await store().messages.send(
        q.id,
        [1, 2, 3].map((i) => newMessage(T, { body: `p${i}` })),
      );
      const first = await store().messages.peek(q.id, 0, 2);
      assert.deepEqual(
        first.map((m) => m.body),
        ['p1', 'p2'],
      );
      assert.deepEqual(
        (await store().messages.peek(q.id, first[1]!.seq, 2)).map((m) => m.body),
        ['p3'],
      );
      const r = await store().messages.receive(q.id, receiveRequest(T));
      assert.ok(
        r.messages.every((m) => m.receiveCount === 1),
        'peeking did not count as receiving',
      );
    });

    test('one active task per source, and a limit per account', async () => {
      const dlq = await makeQueue(store(), { accountId: 'acct-limit' });
      const other = await makeQueue(store(), { accountId: 'acct-limit' });
      await store().messages.send(dlq.id, [newMessage(T), newMessage(T)]);
      const task = await newTask(store(), dlq, 2);
      assert.ok(typeof task === 'object');
      assert.equal(task.status, 'RUNNING');
      assert.equal(task.toMove, 2);
      assert.equal(task.moved, 0);
      assert.equal(await newTask(store(), dlq, 2), 'sourceBusy');
      assert.equal(await newTask(store(), other, 1), 'accountLimit');
      await store().moveTasks.cancel(task.id);
      const next = await newTask(store(), dlq, 2, 1);
      assert.ok(typeof next === 'object', 'a cancelled task is not active');
      assert.equal(next.toMove, 1, 'a selective redrive says how many it expects');
      const listed = await store().moveTasks.list(dlq.id, 10);
      assert.deepEqual(
        listed.map((t) => t.status),
        ['RUNNING', 'CANCELLED'],
        'newest first',
      );
    });

    test('a batch moves the oldest messages as new ones and records progress; then the task completes', async () => {
      const dlq = await makeQueue(store());
      const dest = await makeQueue(store());
      await store().messages.send(
        dlq.id,
        [1, 2, 3].map((i) => newMessage(T + i, { body: `m${i}` })),
      );
      const task = (await newTask(store(), dlq)) as Exclude<Awaited<ReturnType<typeof newTask>>, string>;
      await store().moveTasks.lease('a', T, T + LEASE);
      const r1 = await store().moveTasks.runBatch(task.id, batch('a', T + 100, dest, { limit: 2 }));
      assert.equal(r1.moved, 2);
      assert.equal(r1.task.moved, 2);
      assert.equal(r1.task.status, 'RUNNING');
      assert.deepEqual(await bodies(store(), dest), ['m1', 'm2']);
      assert.deepEqual(await bodies(store(), dlq), ['m3']);
      // Sent after the task started: not part of it.
      await store().messages.send(dlq.id, [newMessage(T + 200, { body: 'late' })]);
      const r2 = await store().moveTasks.runBatch(task.id, batch('a', T + 300, dest, { limit: 2 }));
      assert.equal(r2.task.status, 'COMPLETED');
      assert.equal(r2.task.moved, 3);
      assert.deepEqual(await bodies(store(), dlq), ['late']);
      const moved = await store().messages.peek(dest.id, 0, 10);
      assert.ok(moved.every((m) => m.receiveCount === 0 && m.sentAt >= T + 100));
      // What the engine counts as the redrive's sends (docs/monitoring.md), per batch.
      assert.deepEqual(
        [r1, r2].map((r) => r.sentTo?.map((d) => [d.queue.id, d.count])),
        [[[dest.id, 2]], [[dest.id, 1]]],
      );
    });

    test('a batch skips messages the filter rejects and those in flight, leaving them in place', async () => {
      const dlq = await makeQueue(store());
      const dest = await makeQueue(store());
      await store().messages.send(
        dlq.id,
        ['keep', 'move', 'hidden'].map((b) => newMessage(T, { body: b, visibleAt: b === 'hidden' ? T + 1e9 : T })),
      );
      const task = (await newTask(store(), dlq)) as Exclude<Awaited<ReturnType<typeof newTask>>, string>;
      await store().moveTasks.lease('a', T, T + LEASE);
      const r = await store().moveTasks.runBatch(
        task.id,
        batch('a', T + 1, dest, { matches: (m) => m.body !== 'keep' }),
      );
      assert.equal(r.task.status, 'COMPLETED');
      assert.deepEqual(await bodies(store(), dest), ['move']);
      assert.deepEqual(await bodies(store(), dlq), ['keep', 'hidden']);
    });

    test('a missing destination fails the task and leaves the message where it is', async () => {
      const dlq = await makeQueue(store());
      await store().messages.send(dlq.id, [newMessage(T, { body: 'stay' })]);
      const task = (await newTask(store(), dlq)) as Exclude<Awaited<ReturnType<typeof newTask>>, string>;
      await store().moveTasks.lease('a', T, T + LEASE);
      const r = await store().moveTasks.runBatch(task.id, batch('a', T + 1, undefined));
      assert.equal(r.task.status, 'FAILED');
      assert.equal(r.task.failureReason, 'gone');
      assert.equal(r.moved, 0);
      assert.deepEqual(await bodies(store(), dlq), ['stay']);
    });

    test('leases: one node drives a task; another takes it over only after the lease expires', async () => {
      const dlq = await makeQueue(store());
      const dest = await makeQueue(store());
      await store().messages.send(dlq.id, [newMessage(T), newMessage(T)]);
      const task = (await newTask(store(), dlq)) as Exclude<Awaited<ReturnType<typeof newTask>>, string>;
      assert.ok((await store().moveTasks.lease('a', T, T + LEASE)).some((t) => t.id === task.id));
      assert.ok(!(await store().moveTasks.lease('b', T + 1, T + 1 + LEASE)).some((t) => t.id === task.id));
      assert.equal((await store().moveTasks.runBatch(task.id, batch('b', T + 2, dest, { limit: 1 }))).lost, true);
      assert.ok((await store().moveTasks.lease('b', T + LEASE, T + 2 * LEASE)).some((t) => t.id === task.id));
      assert.equal((await store().moveTasks.runBatch(task.id, batch('a', T + LEASE, dest, { limit: 1 }))).lost, true);
      assert.equal((await store().moveTasks.runBatch(task.id, batch('b', T + LEASE, dest, { limit: 1 }))).moved, 1);
      await store().moveTasks.cancel(task.id);
      assert.equal(
        (await store().moveTasks.runBatch(task.id, batch('b', T + LEASE, dest))).lost,
        true,
        'a cancelled task moves nothing',
      );
      assert.equal((await store().moveTasks.get(task.id))!.moved, 1);
    });
  });
};

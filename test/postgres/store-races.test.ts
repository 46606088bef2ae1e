/**
 * Several PostgresStore instances on one database, as several nodes would hold them,
 * racing for the same rows: FIFO groups, deduplication ids, move tasks, leases, queue
 * changes and wake-ups. Each instance has its own pool and its own LISTEN connection.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { PostgresStore } from '../../src/stores/postgres/store.js';
import { AVAILABLE_CHANNEL } from '../../src/stores/postgres/wakeups.js';
import { makeQueue, newMessage, receiveRequest } from '../stores/harness.js';
import { createTestDatabase, type TestDatabase } from '../support/postgres.js';
import { messageCounts } from '../../src/engine/store/messages.js';

const NODES = 4;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function eventually(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 3000): Promise<number> {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await pause(5);
  }
  return Date.now() - start;
}

describe('several stores on one database', () => {
  let db: TestDatabase;
  let stores: PostgresStore[] = [];

  before(async () => {
    db = await createTestDatabase();
    // Opened at once: the migrations race for the advisory lock.
    stores = await Promise.all(
      Array.from({ length: NODES }, () => PostgresStore.open({ url: db.url, fallbackPollMs: 2000 })),
    );
  });

  after(async () => {
    await Promise.all(stores.map((s) => s.close()));
    await db.drop();
  });

  test('concurrent start-ups applied each migration once', async () => {
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    const { rows } = await c.query<{ version: number }>('SELECT version FROM redrive_migrations ORDER BY version');
    await c.end();
    assert.deepEqual(
      rows.map((r) => r.version),
      rows.map((_, i) => i + 1),
    );
    assert.ok(rows.length >= 2);
  });

  test('concurrent sends, sweeps and a purge from every store keep the maintained count exact', async () => {
    const q = await makeQueue(stores[0]!);
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    const actual = async () =>
      Number(
        (await c.query<{ n: string }>('SELECT count(*) AS n FROM messages WHERE queue_id = $1', [q.id])).rows[0]!.n,
      );
    const total = async (s: PostgresStore) => {
      const d = (await s.messages.depths([q.id], Date.now())).get(q.id)!;
      return d.visible + d.inflight + d.delayed;
    };
    const base = Date.now();
    // Eight senders per store, each sending batches of one to three.
    const send = (s: PostgresStore, k: number) =>
      (async () => {
        for (let i = 0; i < 20; i++)
          await s.messages.send(
            q.id,
            Array.from({ length: 1 + ((i + k) % 3) }, () => newMessage(base + i)),
          );
      })();
    try {
      await Promise.all(stores.flatMap((s, n) => Array.from({ length: 8 }, (_, k) => send(s, n * 8 + k))));
      const sent = await actual();
      assert.ok(sent > 1000);
      for (const s of stores) assert.equal(await total(s), sent, 'every store reads the count of what is stored');
      // Sweeps (statement deletes) racing with sends on other stores.
      await Promise.all([
        stores[0]!.maintenance.deleteSentBefore(q.id, base + 10),
        send(stores[1]!, 1),
        send(stores[2]!, 2),
      ]);
      assert.equal(await total(stores[3]!), await actual());
      // A purge (the bulk delete, which the trigger skips) racing with sends.
      await Promise.all([stores[0]!.queues.purge(q.id, Date.now(), 0), send(stores[1]!, 3), send(stores[2]!, 4)]);
      const left = await actual();
      for (const s of stores) assert.equal(await total(s), left);
    } finally {
      await c.end();
    }
  });

  test('FIFO: receivers on different stores never hold one group at once, and each group goes in order', async () => {
    const q = await makeQueue(stores[0]!, { fifo: true });
    const groups = 16;
    const perGroup = 30;
    const now = Date.now();
    for (let i = 0; i < perGroup; i++) {
      await stores[i % NODES]!.messages.send(
        q.id,
        Array.from({ length: groups }, (_, g) => newMessage(now, { groupId: `g${g}`, body: `g${g}:${i}` })),
      );
    }
    const holder = new Map<string, number>();
    const seen = new Map<string, number[]>();
    let left = groups * perGroup;
    const receiver = async (r: number) => {
      const store = stores[r % NODES]!;
      let idle = 0;
      while (left > 0 && idle < 200) {
        const { messages } = await store.messages.receive(
          q.id,
          receiveRequest(Date.now(), { fifo: true, max: 1 + (r % 10), visibilityTimeoutMs: 60_000 }),
        );
        if (messages.length === 0) {
          idle++;
          await pause(1);
          continue;
        }
        idle = 0;
        const mine = new Set(messages.map((m) => m.groupId!));
        for (const g of mine) {
          assert.equal(
            holder.get(g),
            undefined,
            `group ${g} handed to receiver ${r} while receiver ${holder.get(g)} holds it`,
          );
          holder.set(g, r);
        }
        for (const m of messages) {
          const [g, i] = m.body.split(':') as [string, string];
          seen.set(g, [...(seen.get(g) ?? []), Number(i)]);
        }
        await pause(Math.random() * 3);
        for (const g of mine) holder.delete(g);
        const outcomes = await store.messages.delete(
          q.id,
          messages.map((m) => ({ seq: m.seq, token: m.receiptToken! })),
          { now: Date.now(), requireCurrent: true },
        );
        assert.ok(outcomes.every((o) => o === 'ok'));
        left -= messages.length;
      }
    };
    await Promise.all(Array.from({ length: 12 }, (_, r) => receiver(r)));
    assert.equal(left, 0);
    for (let g = 0; g < groups; g++)
      assert.deepEqual(
        seen.get(`g${g}`),
        Array.from({ length: perGroup }, (_, i) => i),
      );
  });

  test('FIFO: a group another node is receiving from is skipped, not shared or waited for', async () => {
    const q = await makeQueue(stores[0]!, { fifo: true });
    const now = Date.now();
    await stores[0]!.messages.send(
      q.id,
      [1, 2, 3].map((i) => newMessage(now, { groupId: 'busy', body: `b${i}` })),
    );
    await stores[0]!.messages.send(q.id, [newMessage(now, { groupId: 'free', body: 'f1' })]);
    // Another node, mid-receive, holds the group's row lock.
    const other = new pg.Client({ connectionString: db.url });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query(`SELECT 1 FROM fifo_groups WHERE queue_id = $1 AND group_id = 'busy' FOR UPDATE`, [q.id]);
      const started = Date.now();
      for (const s of stores) {
        const { messages } = await s.messages.receive(
          q.id,
          receiveRequest(now, { fifo: true, max: 10, visibilityTimeoutMs: 0 }),
        );
        assert.deepEqual(
          messages.map((m) => m.body),
          ['f1'],
        );
      }
      assert.ok(Date.now() - started < 1000, 'nobody waited for the lock');
      await other.query('ROLLBACK');
      const { messages } = await stores[1]!.messages.receive(
        q.id,
        receiveRequest(now, { fifo: true, max: 10, visibilityTimeoutMs: 60_000 }),
      );
      assert.deepEqual(
        messages.map((m) => m.body),
        ['b1', 'b2', 'b3', 'f1'],
      );
    } finally {
      await other.end();
    }
  });

  test('a FIFO purge racing sends through other stores leaves every surviving message receivable', async () => {
    const q = await makeQueue(stores[0]!, { fifo: true });
    const now = Date.now();
    await stores[0]!.messages.send(
      q.id,
      Array.from({ length: 300 }, (_, i) => newMessage(now, { groupId: `g${i % 7}` })),
    );
    await Promise.all([
      stores[1]!.queues.purge(q.id, now, 60_000),
      ...[2, 3].map((n) =>
        (async () => {
          for (let i = 0; i < 20; i++)
            await stores[n]!.messages.send(q.id, [newMessage(now, { groupId: `g${i % 7}`, body: `after${n}-${i}` })]);
        })(),
      ),
    ]);
    const left = (await messageCounts(stores[0]!.messages, q.id, now)).visible;
    let received = 0;
    for (;;) {
      const { messages } = await stores[0]!.messages.receive(
        q.id,
        receiveRequest(now, { fifo: true, max: 10, visibilityTimeoutMs: 0 }),
      );
      if (messages.length === 0) break;
      received += messages.length;
      await stores[0]!.messages.delete(
        q.id,
        messages.map((m) => ({ seq: m.seq, token: m.receiptToken! })),
        { now, requireCurrent: false },
      );
    }
    assert.ok(left >= 0 && left <= 340);
    assert.equal(received, left, 'no message is stranded without its group');
  });

  test('standard: concurrent receivers on different stores never get one message twice', async () => {
    const q = await makeQueue(stores[0]!);
    const now = Date.now();
    await stores[1]!.messages.send(
      q.id,
      Array.from({ length: 500 }, (_, i) => newMessage(now, { body: `s${i}` })),
    );
    const got: string[] = [];
    await Promise.all(
      Array.from({ length: 12 }, async (_, r) => {
        for (;;) {
          const { messages } = await stores[r % NODES]!.messages.receive(
            q.id,
            receiveRequest(Date.now(), { max: 10, visibilityTimeoutMs: 60_000 }),
          );
          if (messages.length === 0) return;
          got.push(...messages.map((m) => m.body));
        }
      }),
    );
    assert.equal(got.length, 500);
    assert.equal(new Set(got).size, 500);
  });

  test('one deduplication id sent through every store at once stores one message', async () => {
    const q = await makeQueue(stores[0]!, { fifo: true });
    const now = Date.now();
    const sends = Array.from({ length: 40 }, (_, i) =>
      stores[i % NODES]!.messages.send(q.id, [
        newMessage(now, {
          groupId: 'd',
          dedupId: 'same',
          dedupScope: 'queue',
          dedupUntil: now + 300_000,
          body: `try${i}`,
        }),
      ]),
    );
    const results = (await Promise.all(sends)).map(({ messages: [m] }) => m!);
    assert.equal(results.filter((m) => !m.duplicate).length, 1);
    assert.equal(new Set(results.map((m) => m.messageId)).size, 1, 'every duplicate names the stored message');
    assert.equal((await messageCounts(stores[0]!.messages, q.id, now)).visible, 1);
  });

  test('one move task per source even when every store starts one at once', async () => {
    const q = await makeQueue(stores[0]!, { accountId: 'race-acct' });
    const results = await Promise.all(
      stores.map((s) =>
        s.moveTasks.create(
          {
            id: randomUUID(),
            accountId: 'race-acct',
            sourceQueueId: q.id,
            sourceArn: 'arn:q',
            startedAt: Date.now(),
          },
          100,
        ),
      ),
    );
    assert.equal(results.filter((r) => typeof r === 'object').length, 1);
    assert.ok(results.every((r) => typeof r === 'object' || r === 'sourceBusy'));
  });

  test('a lease is held by one store at a time and passes on when it expires', async () => {
    const now = Date.now();
    const won = await Promise.all(stores.map((s, i) => s.maintenance.tryLease('sweep', `n${i}`, now, 1000)));
    assert.equal(won.filter(Boolean).length, 1);
    const owner = won.indexOf(true);
    const other = (owner + 1) % NODES;
    assert.equal(
      await stores[owner]!.maintenance.tryLease('sweep', `n${owner}`, now + 500, 1000),
      true,
      'the holder renews',
    );
    assert.equal(
      await stores[other]!.maintenance.tryLease('sweep', `n${other}`, now + 1400, 1000),
      false,
      'renewed until now + 1500',
    );
    assert.equal(
      await stores[other]!.maintenance.tryLease('sweep', `n${other}`, now + 1500, 1000),
      true,
      'expired: taken over',
    );
  });

  test('a queue changed through one store is seen by the others', async () => {
    const q = await makeQueue(stores[0]!);
    assert.equal((await stores[2]!.queues.get(q))?.attributes.DelaySeconds, undefined);
    await stores[1]!.queues.update(q.id, { setAttributes: { DelaySeconds: '7' } });
    const ms = await eventually(
      async () => (await stores[2]!.queues.get(q))?.attributes.DelaySeconds === '7',
      'the cached queue to be dropped',
    );
    assert.ok(ms < 1000);
    await stores[3]!.queues.delete(q.id);
    await eventually(async () => (await stores[2]!.queues.get(q)) === undefined, 'the deleted queue to be forgotten');
  });

  test("every node's list of all queues shows a queue created, changed or deleted on another node", async () => {
    const mine = async (i: number) =>
      (await stores[i]!.queues.all())
        .filter((q) => q.name.startsWith('listed-'))
        .map((q) => `${q.name}:${q.attributes.DelaySeconds ?? ''}`);
    await mine(2); // now cached on node 2
    const q = await makeQueue(stores[0]!, { name: 'listed-a' });
    await eventually(async () => (await mine(2)).join() === 'listed-a:', "the new queue in node 2's list");
    await stores[1]!.queues.update(q.id, { setAttributes: { DelaySeconds: '4' } });
    await eventually(async () => (await mine(2)).join() === 'listed-a:4', "the change in node 2's list");
    await stores[3]!.queues.delete(q.id);
    await eventually(async () => (await mine(2)).length === 0, "the deletion in node 2's list");
  });

  test('a send through one store wakes listeners of the others', async () => {
    const q = await makeQueue(stores[0]!);
    const woken = new Map<number, number | undefined>();
    const offs = stores.map((s, i) => s.wakeups.subscribe(q.id, (n) => woken.set(i, n)));
    const started = Date.now();
    await stores[0]!.messages.send(q.id, [newMessage(Date.now()), newMessage(Date.now())]);
    const ms = await eventually(() => woken.size === NODES, 'every store to be woken', 1000);
    offs.forEach((off) => off());
    assert.ok(Date.now() - started < 1000, `woken in ${ms} ms`);
    // Each is told how many messages it may take: the sender's listeners and the others' alike.
    assert.deepEqual(
      [...woken.values()],
      stores.map(() => 2),
    );
  });

  test("a send batch leaves the other nodes untold of what this node's idle long polls take, and tells them of the rest", async () => {
    const q = await makeQueue(stores[0]!);
    // What the other nodes are told: notifications arrive in commit order, so once the
    // notice of a later send is here, that of an earlier one would have been too.
    const listener = new pg.Client({ connectionString: db.url });
    await listener.connect();
    const told: string[] = [];
    listener.on('notification', (n) => {
      if (n.channel !== AVAILABLE_CHANNEL) return;
      // `node:ids:counts`: the count of each queue, in the same place.
      const [, ids, counts] = n.payload!.split(':');
      const i = ids!.split(',').indexOf(String(q.id));
      if (i >= 0) told.push(`${q.id}=${counts!.split(',')[i]}`);
    });
    await listener.query(`LISTEN ${AVAILABLE_CHANNEL}`);
    let capacity = 10;
    let wokenHere = 0;
    const off = stores[0]!.wakeups.subscribe(
      q.id,
      () => wokenHere++,
      () => capacity,
    );
    try {
      await stores[0]!.messages.send(q.id, [newMessage(Date.now())]);
      assert.equal(wokenHere, 1, 'the local long poll is woken');
      capacity = 2;
      await stores[0]!.messages.send(q.id, [newMessage(Date.now()), newMessage(Date.now()), newMessage(Date.now())]);
      await eventually(() => told.length === 1, 'the others to be told of three messages for a capacity of two');
      assert.equal(told[0], `${q.id}=1`, 'of the one message the local polls leave');
      capacity = 0;
      await stores[0]!.messages.send(q.id, [newMessage(Date.now())]);
      await eventually(() => told.length === 2, 'the others to be told when no local poll is idle');
      assert.equal(told.length, 2, 'the first message, which the local poll took, was not announced');
    } finally {
      off();
      await listener.end();
    }
  });

  test('a lost LISTEN connection is re-established, and no wake-up is lost meanwhile', async () => {
    const q = await makeQueue(stores[0]!);
    let woken = 0;
    const off = stores[1]!.wakeups.subscribe(q.id, () => woken++);
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    try {
      // Ends every LISTEN connection; the stores' pools are untouched.
      await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                          WHERE datname = current_database() AND query LIKE 'LISTEN%' AND pid <> pg_backend_pid()`);
      await stores[0]!.messages.send(q.id, [newMessage(Date.now())]);
      await eventually(() => woken > 0, 'the waiting listener to be woken (reconnect or fallback poll)', 5000);
      // Once reconnected, NOTIFY works again: wait for the LISTEN to be back, then send.
      await eventually(
        async () => {
          const { rows } = await admin.query(
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'`,
          );
          return rows[0].n >= NODES;
        },
        'every store to listen again',
        5000,
      );
      woken = 0;
      await stores[2]!.messages.send(q.id, [newMessage(Date.now())]);
      // Well within the 2 s fallback poll: the notification did it.
      assert.ok((await eventually(() => woken > 0, 'a wake-up by NOTIFY', 1000)) < 1000);
    } finally {
      off();
      await admin.end();
    }
  });
});

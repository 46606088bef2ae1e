import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { newQueue } from '../src/engine/store/queues.js';
import type { PostgresStore } from '../src/stores/postgres/store.js';
import { processCpuSeconds } from './processes.js';
import { markdown } from './report.js';
import { median } from './stats.js';

/**
 * What the PostgreSQL store writes to the database's WAL per message, by phase: `batch`
 * concurrent single sends at a time, then receives of ten, `batch / 2` at a time, then
 * deletes of what they got; the WAL bytes are `pg_current_wal_insert_lsn()` differences,
 * so the cluster must be one nothing else writes to (a private one: any other database's
 * writes count too). Each round gets a new database on the cluster of BENCH_POSTGRES_URL
 * (a maintenance database URL), dropped after it. BENCH_STORE_DIST runs another build's store.
 * The CPU per message of this process (the store's side) and, given BENCH_POSTGRES_PID
 * (the postmaster's pid), of the database server are reported beside the bytes.
 *
 *   BENCH_POSTGRES_URL=postgres://postgres@127.0.0.1:54329/postgres node dist/bench/postgres-wal.js [messages=5000] [batch=16] [rounds=3]
 */
const [messages = 5000, batch = 16, rounds = 3] = process.argv.slice(2).map(Number);
const adminUrl = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const dist = process.env.BENCH_STORE_DIST;
const storeModule = dist
  ? pathToFileURL(join(dist, 'src/stores/postgres/store.js')).href
  : '../src/stores/postgres/store.js';
if (dist && !existsSync(join(dist, 'src/stores/postgres/store.js'))) throw new Error(`no PostgreSQL store in ${dist}`);
const { PostgresStore: Store } = (await import(storeModule)) as { PostgresStore: typeof PostgresStore };
const body = 'x'.repeat(Number(process.env.BENCH_BODY_BYTES ?? 256));

async function admin<T>(fn: (c: pg.Client) => Promise<T>, url = adminUrl): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}
/**
 * CPU seconds of the database server so far, when BENCH_POSTGRES_PID names its postmaster:
 * the postmaster's own, its reaped children's, and its live children's (the backends),
 * from /proc. The cluster must be private for this too.
 */
const postmaster = process.env.BENCH_POSTGRES_PID && Number(process.env.BENCH_POSTGRES_PID);
function databaseCpu(): number {
  if (!postmaster) return 0;
  let total = processCpuSeconds(postmaster, true);
  for (const pid of readFileSync(`/proc/${postmaster}/task/${postmaster}/children`, 'utf8').trim().split(/\s+/))
    if (pid)
      try {
        total += processCpuSeconds(Number(pid));
      } catch {
        // a backend that exited in between: its time is in the postmaster's reaped children's now
      }
  return total;
}
const lsn = () =>
  admin(async (c) => BigInt((await c.query("SELECT pg_current_wal_insert_lsn() - '0/0' AS b")).rows[0].b as string));

async function round(): Promise<Record<string, number>> {
  const name = `redrive_wal_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const store = await Store.open({ url: url.toString() });
  let closed = false;
  try {
    const now = Date.now();
    const { queue } = await store.queues.create(
      newQueue({ accountId: '000000000000', region: 'us-east-1', name: 'wal', fifo: false, attributes: {} }, now),
    );
    const cpu: Record<string, number> = {};
    const phase = async (run: () => Promise<void>, name: string) => {
      const before = await lsn();
      const [db, node] = [databaseCpu(), process.cpuUsage()];
      await run();
      const nodeUs = process.cpuUsage(node);
      cpu[`${name}: node CPU µs`] = (nodeUs.user + nodeUs.system) / messages;
      if (postmaster) cpu[`${name}: database CPU µs`] = ((databaseCpu() - db) * 1e6) / messages;
      return Number((await lsn()) - before) / messages;
    };
    const send = await phase(async () => {
      for (let i = 0; i < messages; i += batch) {
        const t = Date.now();
        await Promise.all(
          Array.from({ length: Math.min(batch, messages - i) }, () =>
            store.messages.send(queue.id, [
              { messageId: randomUUID(), body, md5OfBody: 'x', senderId: '000000000000', sentAt: t, visibleAt: t },
            ]),
          ),
        );
      }
    }, 'send');
    const receipts: { seq: number; token: string }[] = [];
    const receive = await phase(async () => {
      for (let got = 1; got > 0; ) {
        const t = Date.now();
        const results = await Promise.all(
          Array.from({ length: Math.max(1, batch / 2) }, () =>
            store.messages.receive(queue.id, {
              now: t,
              max: 10,
              visibilityTimeoutMs: 600_000,
              retentionCutoff: 0,
              newToken: () => randomUUID().slice(0, 16),
            }),
          ),
        );
        got = 0;
        for (const r of results)
          for (const m of r.messages) {
            got++;
            receipts.push({ seq: m.seq, token: m.receiptToken! });
          }
      }
    }, 'receive');
    const remove = await phase(async () => {
      for (let i = 0; i < receipts.length; i += 10 * Math.max(1, batch / 2)) {
        const chunk = receipts.slice(i, i + 10 * Math.max(1, batch / 2));
        const t = Date.now();
        await Promise.all(
          Array.from({ length: Math.ceil(chunk.length / 10) }, (_, j) =>
            store.messages.delete(queue.id, chunk.slice(10 * j, 10 * j + 10), { now: t, requireCurrent: false }),
          ),
        );
      }
    }, 'delete');
    if (receipts.length !== messages) throw new Error(`received ${receipts.length} of ${messages}`);
    const cycle = (what: string) =>
      ['send', 'receive', 'delete'].reduce((sum, p) => sum + (cpu[`${p}: ${what}`] ?? 0), 0);
    // Which of the updates (the claims) were HOT: the store's backends report their counts
    // to the statistics when they exit (idle ones only every 10 s).
    await store.close();
    closed = true;
    await new Promise((r) => setTimeout(r, 500));
    const { rows: upd } = await admin(
      (c) =>
        c.query<{ n: string; hot: string }>(
          "SELECT sum(n_tup_upd) AS n, sum(n_tup_hot_upd) AS hot FROM pg_stat_user_tables WHERE relname IN ('messages', 'deliveries')",
        ),
      url.toString(),
    );
    return {
      'message updates per message': Number(upd[0]!.n) / messages,
      'HOT updates per message': Number(upd[0]!.hot) / messages,
      send,
      receive,
      delete: remove,
      'whole cycle': send + receive + remove,
      'cycle: node CPU µs': cycle('node CPU µs'),
      ...(postmaster && { 'cycle: database CPU µs': cycle('database CPU µs') }),
      ...cpu,
    };
  } finally {
    if (!closed) await store.close();
    await admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  }
}

const all: Record<string, number>[] = [];
for (let r = 0; r < rounds; r++) all.push(await round());
console.log(
  `PostgreSQL store, ${dist ?? 'this build'}: ${messages} messages of ${body.length} bytes, ${batch} sends or ${Math.max(1, batch / 2)} receives/deletes of ten at a time; WAL bytes per message, median of ${rounds} rounds\n`,
);
console.log(
  markdown(
    ['phase', 'WAL B/msg, or CPU µs/msg', 'rounds'],
    Object.keys(all[0]!).map((k) => [
      k,
      Math.round(median(all.map((a) => a[k]!))).toString(),
      all.map((a) => Math.round(a[k]!)).join(', '),
    ]),
  ),
);

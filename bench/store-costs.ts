import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { SqliteStore } from '../src/stores/sqlite/store.js';
import { markdown } from './report.js';
import { median } from './stats.js';
import { WalCounter } from './wal.js';
import { newQueue } from '../src/engine/store/queues.js';

/**
 * What the SQLite store itself spends per message, without HTTP or the engine: W1's
 * writes (single sends, `batch` of them joined in each group commit, as 32 connections
 * make them) and W3's (the same sends, then receives of ten and deletes of what they got),
 * as CPU µs per message, WAL bytes per message and the bytes the process wrote per
 * message (`/proc/self/io`: `write_bytes`, what reached the disk's page cache to be
 * written, WAL and checkpoints into the database file alike; `wchar`, every byte passed
 * to write()), by phase. Each phase waits out one checkpoint interval before it is read,
 * so the checkpoint of its own frames counts in it. In one process and one
 * thread, so it is steadier than the HTTP benchmark on a busy machine; a commit that
 * changed the hot path is compared with the one before by running this on both builds
 * alternately (BENCH_STORE_DIST).
 *
 *   node dist/bench/store-costs.js [messages=20000] [batch=16] [rounds=5]
 *   BENCH_STORE_DIST=/tmp/perf-a/dist node dist/bench/store-costs.js   # another build's store
 *   BENCH_BODY_BYTES=65536 node dist/bench/store-costs.js 2000          # bodies of another size (256)
 */
const [messages = 20_000, batch = 16, rounds = 5] = process.argv.slice(2).map(Number);
const dist = process.env.BENCH_STORE_DIST;
const storeModule = !dist
  ? '../src/stores/sqlite/store.js'
  : pathToFileURL(
      join(
        dist,
        existsSync(join(dist, 'src/stores/sqlite/store.js'))
          ? 'src/stores/sqlite/store.js'
          : 'src/stores/sqlite/sqlite-store.js',
      ),
    ).href;
const { SqliteStore: Store } = (await import(storeModule)) as { SqliteStore: typeof SqliteStore };

type Api = Pick<SqliteStore['messages'], 'send' | 'receive' | 'delete'> & { create: SqliteStore['queues']['create'] };
/** The store's message and queue calls; builds before the store was split by concern had them on the store itself. */
function api(store: SqliteStore): Api {
  const s = store as unknown as Record<string, (...a: unknown[]) => Promise<never>>;
  if (store.messages) {
    const m = store.messages;
    return {
      send: (...a) => m.send(...a),
      receive: (...a) => m.receive(...a),
      delete: (...a) => m.delete(...a),
      create: (q) => store.queues.create(q),
    };
  }
  return {
    send: (...a) => s.send!(...a),
    receive: (...a) => s.receive!(...a),
    delete: (...a) => s.deleteMessages!(...a),
    create: (q) => s.createQueue!(q),
  };
}

const body = 'x'.repeat(Number(process.env.BENCH_BODY_BYTES ?? 256));
const cpuMicros = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

interface Phase {
  cpu: number;
  wal: number;
  disk: number;
  written: number;
}

/** This process's write counters (all threads: the checkpoint worker's too). */
function io(): { disk: number; written: number } {
  const text = readFileSync('/proc/self/io', 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}: (\\d+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
  return { disk: field('write_bytes'), written: field('wchar') };
}
/** Longer than the checkpoint worker's interval (checkpointer.ts, 200 ms). */
const CHECKPOINT_WAIT_MS = 300;

async function round(): Promise<Record<string, Phase>> {
  const dir = mkdtempSync(join(tmpdir(), 'redrive-store-costs-'));
  const store = new Store({ path: join(dir, 'redrive.db'), durability: 'process' });
  const calls = api(store);
  try {
    const now = Date.now();
    const { queue } = await calls.create(
      newQueue({ accountId: '000000000000', region: 'us-east-1', name: 'costs', fifo: false, attributes: {} }, now),
    );
    const wal = new WalCounter(join(dir, 'redrive.db-shm'));
    const phase = async (run: () => Promise<void>): Promise<Phase> => {
      wal.start();
      const before = io();
      const start = cpuMicros();
      await run();
      await new Promise((r) => setTimeout(r, CHECKPOINT_WAIT_MS));
      const cpu = cpuMicros() - start;
      const w = wal.stop();
      const after = io();
      if (process.env.BENCH_STORE_VERBOSE) console.log(w);
      return {
        cpu: cpu / messages,
        wal: w.bytes / messages,
        disk: (after.disk - before.disk) / messages,
        written: (after.written - before.written) / messages,
      };
    };
    const send = () =>
      phase(async () => {
        for (let i = 0; i < messages; i += batch) {
          const t = Date.now();
          await Promise.all(
            Array.from({ length: Math.min(batch, messages - i) }, () =>
              calls.send(queue.id, [
                {
                  messageId: randomUUID(),
                  body,
                  md5OfBody: 'fafb00f5732ab283681e124bf8747ed1',
                  senderId: '000000000000',
                  sentAt: t,
                  visibleAt: t,
                },
              ]),
            ),
          );
        }
      });
    const sends = await send();
    const receipts: { seq: number; token: string }[] = [];
    const receives = await phase(async () => {
      // Receives of ten, `batch` of them per group commit.
      for (let got = 1; got > 0; ) {
        const t = Date.now();
        const results = await Promise.all(
          Array.from({ length: Math.max(1, batch / 2) }, () =>
            calls.receive(queue.id, {
              now: t,
              max: 10,
              visibilityTimeoutMs: 30_000,
              retentionCutoff: 0,
              newToken: () => randomUUID(),
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
    });
    const deletes = await phase(async () => {
      for (let i = 0; i < receipts.length; i += 10 * Math.max(1, batch / 2)) {
        const t = Date.now();
        const chunk = receipts.slice(i, i + 10 * Math.max(1, batch / 2));
        const groups = Array.from({ length: Math.ceil(chunk.length / 10) }, (_, j) => chunk.slice(10 * j, 10 * j + 10));
        await Promise.all(groups.map((g) => calls.delete(queue.id, g, { now: t, requireCurrent: false })));
      }
    });
    if (receipts.length !== messages) throw new Error(`received ${receipts.length} of ${messages}`);
    return {
      send: sends,
      receive: receives,
      delete: deletes,
      'receive + delete': sum(receives, deletes),
      'W3 cycle (sum)': sum(sends, receives, deletes),
    };
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function sum(...phases: Phase[]): Phase {
  const total = (k: keyof Phase) => phases.reduce((t, p) => t + p[k], 0);
  return { cpu: total('cpu'), wal: total('wal'), disk: total('disk'), written: total('written') };
}

const all: Record<string, Phase>[] = [];
for (let r = 0; r < rounds; r++) all.push(await round());
const names = Object.keys(all[0]!);
console.log(
  `SQLite store, ${dist ?? 'this build'}: ${messages} messages of ${body.length} bytes, ${batch} sends or ${Math.max(1, batch / 2)} receives/deletes of ten per commit, median of ${rounds} rounds\n`,
);
console.log(
  markdown(
    ['phase', 'CPU µs/msg', 'WAL B/msg', 'disk write_bytes B/msg', 'write() B/msg'],
    names.map((n) => [
      n,
      median(all.map((a) => a[n]!.cpu)).toFixed(1),
      ...(['wal', 'disk', 'written'] as const).map((k) => Math.round(median(all.map((a) => a[n]![k]))).toString()),
    ]),
  ),
);

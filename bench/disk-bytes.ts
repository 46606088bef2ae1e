import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { SqsClient } from './http-load.js';
import { markdown } from './report.js';
import { median } from './stats.js';
import { startRedrive } from './targets.js';

/**
 * The bytes a Redrive server process writes per message, measured from outside
 * (`/proc/<pid>/io`: `write_bytes`, which counts the WAL and the checkpoints into the
 * database file alike), by phase, through HTTP: `messages` single SendMessages on 16
 * connections, then 8 connections looping ReceiveMessage(10) until all are received,
 * then 8 connections deleting them with DeleteMessageBatch of ten. A SQLite server with
 * durability `process`, fresh for each round; BENCH_SERVER_DIST runs another build.
 *
 * `npm run bench` runs it once per body size (256 B, 4 KiB, 64 KiB); alone, several rounds:
 *
 *   node dist/bench/disk-bytes.js [messages=20000] [bodyBytes=256] [rounds=3]
 */
const SENDERS = 16;
const RECEIVERS = 8;
/** Longer than the server's checkpoint interval (200 ms), so a phase's checkpoint counts in it. */
const SETTLE_MS = 300;

const writeBytes = (pid: number) =>
  Number(/^write_bytes: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1] ?? Number.NaN);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One round: a fresh server, `messages` messages of `bodyBytes` bytes sent, received and deleted. */
async function round(messages: number, bodyBytes: number): Promise<Record<string, number>> {
  const target = await startRedrive({ storage: 'sqlite', durability: 'process' });
  const pid = target.pids![0]!;
  const client = new SqsClient(target.url, SENDERS);
  try {
    const phase = async (run: () => Promise<void>) => {
      const before = writeBytes(pid);
      await run();
      await sleep(SETTLE_MS);
      return (writeBytes(pid) - before) / messages;
    };
    const body = JSON.stringify({ QueueUrl: target.queue, MessageBody: 'x'.repeat(bodyBytes) });
    let sent = 0;
    const send = await phase(async () => {
      await Promise.all(
        Array.from({ length: SENDERS }, async () => {
          while (sent < messages) {
            sent++;
            await client.call('SendMessage', body);
          }
        }),
      );
    });
    const handles: string[] = [];
    const receiveBody = JSON.stringify({ QueueUrl: target.queue, MaxNumberOfMessages: 10, VisibilityTimeout: 600 });
    const receive = await phase(async () => {
      await Promise.all(
        Array.from({ length: RECEIVERS }, async () => {
          while (handles.length < messages) {
            const got = JSON.parse(await client.call('ReceiveMessage', receiveBody)) as {
              Messages?: { ReceiptHandle: string }[];
            };
            for (const m of got.Messages ?? []) handles.push(m.ReceiptHandle);
          }
        }),
      );
    });
    let next = 0;
    const remove = await phase(async () => {
      await Promise.all(
        Array.from({ length: RECEIVERS }, async () => {
          while (next < handles.length) {
            const batch = handles.slice(next, next + 10);
            next += 10;
            const entries = batch.map((h, i) => ({ Id: `d${i}`, ReceiptHandle: h }));
            const res = await client.call(
              'DeleteMessageBatch',
              JSON.stringify({ QueueUrl: target.queue, Entries: entries }),
            );
            if (res.includes('"Failed":[{')) throw new Error(`DeleteMessageBatch failed: ${res.slice(0, 200)}`);
          }
        }),
      );
    });
    return {
      send,
      receive,
      delete: remove,
      'receive + delete': receive + remove,
      'whole cycle': send + receive + remove,
    };
  } finally {
    await client.close();
    await target.stop();
  }
}

/** Disk bytes per message by phase, medians of `rounds` rounds (and each round's). */
export interface DiskBytes {
  bodyBytes: number;
  messages: number;
  phases: Record<string, { median: number; rounds: number[] }>;
}

export async function measureDiskBytes(messages: number, bodyBytes: number, rounds: number): Promise<DiskBytes> {
  const all: Record<string, number>[] = [];
  for (let r = 0; r < rounds; r++) all.push(await round(messages, bodyBytes));
  const phases = Object.fromEntries(
    Object.keys(all[0]!).map((k) => {
      const values = all.map((a) => Math.round(a[k]!));
      return [k, { median: median(values), rounds: values }];
    }),
  );
  return { bodyBytes, messages, phases };
}

/** `npm run bench`'s pass: one round per body size, fewer messages for the larger ones. */
export async function runDiskBytes(log: (line: string) => void): Promise<DiskBytes[]> {
  const out: DiskBytes[] = [];
  for (const [bodyBytes, messages] of [
    [256, 20_000],
    [4096, 5_000],
    [65_536, 2_000],
  ] as const) {
    log(`[disk] ${messages} messages of ${bodyBytes} bytes`);
    out.push(await measureDiskBytes(messages, bodyBytes, 1));
  }
  return out;
}

export function formatDiskBytes(figures: DiskBytes[]): string {
  const phases = Object.keys(figures[0]?.phases ?? {});
  return `Disk bytes written by the Redrive server per message (/proc/PID/io write_bytes; SQLite, durability process; 16 sending connections, then 8 receiving, then 8 deleting in batches of ten)\n\n${markdown(
    ['body', ...phases],
    figures.map((f) => [`${f.bodyBytes} B`, ...phases.map((p) => String(f.phases[p]!.median))]),
  )}`;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [messages = 20_000, bodyBytes = 256, rounds = 3] = process.argv.slice(2).map(Number);
  const f = await measureDiskBytes(messages, bodyBytes, rounds);
  console.log(
    `Disk bytes written by the server (/proc/PID/io write_bytes) per message, ${process.env.BENCH_SERVER_DIST ?? 'this build'}: ` +
      `${messages} messages of ${bodyBytes} bytes, median of ${rounds} rounds\n`,
  );
  console.log(
    markdown(
      ['phase', 'write_bytes B/msg', 'rounds'],
      Object.entries(f.phases).map(([k, v]) => [k, String(v.median), v.rounds.join(', ')]),
    ),
  );
}

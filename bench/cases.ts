import type { LoadKind } from './protocol.js';
import type { RedriveOptions } from './targets.js';

/** Every measured case: which system, which load, and which count is the headline. */
export interface Case {
  id: string;
  system: 'redrive' | 'canned' | 'rabbit' | 'pgboss' | 'fauxqs';
  redrive?: RedriveOptions;
  kind: LoadKind;
  producers: number;
  consumers: number;
  /** `sent` for send workloads, `consumed` for send→receive→delete cycles. */
  metric: 'sent' | 'consumed';
  /** `fifo-cycle`: message groups the producers pick from. */
  groups?: number;
  /** AMQP kinds: the queue type declared. */
  queueType?: 'classic' | 'quorum';
  /** Several nodes: producers on the first, consumers on the others (LoadSpec.crossNodes). */
  crossNodes?: boolean;
}

const sqlite: RedriveOptions = { storage: 'sqlite', durability: 'process' };
const send = { kind: 'send', producers: 32, consumers: 0, metric: 'sent' } as const;
const batch = { kind: 'batch', producers: 32, consumers: 0, metric: 'sent' } as const;
const cycle = { kind: 'cycle', producers: 16, consumers: 16, metric: 'consumed' } as const;

export const cases: Case[] = [
  { id: 'W1', system: 'redrive', redrive: sqlite, ...send },
  { id: 'W1-memory', system: 'redrive', redrive: { storage: 'memory', durability: 'process' }, ...send },
  { id: 'W1-power', system: 'redrive', redrive: { storage: 'sqlite', durability: 'power' }, ...send },
  { id: 'W2', system: 'redrive', redrive: sqlite, ...batch },
  { id: 'W3', system: 'redrive', redrive: sqlite, ...cycle },
  { id: 'W3b', system: 'redrive', redrive: sqlite, ...cycle, kind: 'cycle-batch' },
  // --threads (docs/scaling.md): W1 under wrk, which leaves a core to the server; W3 with two HTTP threads.
  { id: 'W1-wrk', system: 'redrive', redrive: sqlite, ...send, kind: 'send-wrk' },
  { id: 'W1-wrk-t2', system: 'redrive', redrive: { ...sqlite, threads: 2 }, ...send, kind: 'send-wrk' },
  { id: 'W3-t2', system: 'redrive', redrive: { ...sqlite, threads: 2 }, ...cycle },
  // W5: W3's 32 clients (16 producers, 16 consumers) on a FIFO queue, 100 message groups.
  { id: 'W5', system: 'redrive', redrive: { ...sqlite, fifo: true }, ...cycle, kind: 'fifo-cycle', groups: 100 },
  // W3 on PostgreSQL: one node, then two server processes on the same database.
  { id: 'W3-pg', system: 'redrive', redrive: { storage: 'postgres', durability: 'process' }, ...cycle },
  { id: 'W3-pg-2', system: 'redrive', redrive: { storage: 'postgres', durability: 'process', nodes: 2 }, ...cycle },
  { id: 'canned-send', system: 'canned', ...send },
  { id: 'canned-batch', system: 'canned', ...batch },
  // The in-memory peer: fauxqs, an SQS emulator on Node (targets.ts), under W1's and W3's load.
  { id: 'fauxqs-send', system: 'fauxqs', ...send },
  { id: 'fauxqs-cycle', system: 'fauxqs', ...cycle },
  { id: 'rabbit-publish', system: 'rabbit', ...send, kind: 'rabbit-publish' },
  { id: 'rabbit-cycle', system: 'rabbit', ...cycle, kind: 'rabbit-cycle' },
  // AMQP: Redrive's listener under the same load as RabbitMQ, classic and quorum queues.
  { id: 'amqp-publish', system: 'redrive', redrive: { ...sqlite, amqp: true }, ...send, kind: 'rabbit-publish' },
  { id: 'amqp-cycle', system: 'redrive', redrive: { ...sqlite, amqp: true }, ...cycle, kind: 'rabbit-cycle' },
  { id: 'rabbit-publish-quorum', system: 'rabbit', ...send, kind: 'rabbit-publish', queueType: 'quorum' },
  { id: 'rabbit-cycle-quorum', system: 'rabbit', ...cycle, kind: 'rabbit-cycle', queueType: 'quorum' },
  // The PostgreSQL baseline (pgboss-load.ts): W3's shape of work with pg-boss, on its own database.
  { id: 'pgboss-cycle', system: 'pgboss', ...cycle, kind: 'pgboss-cycle' },
];

/**
 * W3 again with the producers held to half of W3's median consumed rate: the latency
 * target (p99 ≤ 10 ms) is about a server that is busy but not saturated, where a
 * flat-out cycle only measures how long the backlog is.
 */
export const halfRateCase: Case = { id: 'W3-half', system: 'redrive', redrive: sqlite, ...cycle };

/**
 * Two PostgreSQL nodes at half of W3-pg-2's median rate, producers on one node and
 * consumers on the other: every message is sent on one node and wakes a long poll on the
 * other (NOTIFY), so its p99 is the cross-node wake-up target (under 20 ms).
 */
export const crossNodeHalfCase: Case = {
  id: 'W3-pg-2-half',
  system: 'redrive',
  redrive: { storage: 'postgres', durability: 'process', nodes: 2 },
  ...cycle,
  crossNodes: true,
};

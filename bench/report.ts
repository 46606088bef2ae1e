import type { BacklogFigures } from './backlog.js';
import type { Measurement } from './measure.js';
import { median } from './stats.js';

/** Medians of each figure over a case's runs, and the table and JSON built from them. */

/** The medians of a run's own figures, and a few more drawn from its raw counts. */
export interface Summary
  extends Pick<
    Measurement,
    | 'rate'
    | 'sentRate'
    | 'requestsPerSecond'
    | 'serverCpu'
    | 'clientCpu'
    | 'serverMicrosPerMessage'
    | 'databaseCpu'
    | 'otherCpu'
    | 'databaseMicrosPerMessage'
    | 'roundTripsPerMessage'
  > {
  latencyP50?: number;
  latencyP99?: number;
  walBytesPerMessage?: number;
  commitsPerMessage?: number;
  checkpointsPerMessage?: number;
  /** Client CPU per message: for pg-boss, a library in the load child, this is where its own work runs. */
  clientMicrosPerMessage?: number;
  /** ReceiveMessage calls per consumed message, and the share of them that came back empty. */
  receivesPerMessage?: number;
  emptyReceiveShare?: number;
  errors: number;
  runs: number;
}

export type Outcome = { runs: Measurement[]; summary?: Summary; skipped?: string };

const med = (xs: (number | undefined)[]): number | undefined => {
  const defined = xs.filter((x): x is number => x !== undefined && Number.isFinite(x));
  return defined.length ? median(defined) : undefined;
};

export function summarise(runs: Measurement[]): Summary | undefined {
  if (runs.length === 0) return undefined;
  return {
    rate: med(runs.map((r) => r.rate))!,
    sentRate: med(runs.map((r) => r.sentRate))!,
    requestsPerSecond: med(runs.map((r) => r.requestsPerSecond))!,
    serverCpu: med(runs.map((r) => r.serverCpu)),
    clientCpu: med(runs.map((r) => r.clientCpu))!,
    serverMicrosPerMessage: med(runs.map((r) => r.serverMicrosPerMessage)),
    databaseCpu: med(runs.map((r) => r.databaseCpu)),
    databaseMicrosPerMessage: med(runs.map((r) => r.databaseMicrosPerMessage)),
    roundTripsPerMessage: med(runs.map((r) => r.roundTripsPerMessage)),
    receivesPerMessage: med(
      runs.map((r) => (r.raw.receives && r.raw.consumed ? r.raw.receives / r.raw.consumed : undefined)),
    ),
    emptyReceiveShare: med(runs.map((r) => (r.raw.receives ? r.raw.emptyReceives / r.raw.receives : undefined))),
    otherCpu: med(runs.map((r) => r.otherCpu)),
    latencyP50: med(runs.map((r) => r.latency?.p50)),
    latencyP99: med(runs.map((r) => r.latency?.p99)),
    walBytesPerMessage: med(runs.map((r) => r.walBytesPerMessage)),
    commitsPerMessage: med(runs.map((r) => r.commitsPerMessage)),
    checkpointsPerMessage: med(runs.map((r) => r.checkpointsPerMessage)),
    clientMicrosPerMessage: med(runs.map((r) => (r.rate ? (1e4 * r.clientCpu) / r.rate : undefined))),
    errors: runs.reduce((n, r) => n + r.errors, 0),
    runs: runs.length,
  };
}

interface Row {
  workload: string;
  redrive: string;
  canned?: string;
  rabbit?: string;
  /** The ratio is to this Redrive case instead of the canned server (W5 against W3). */
  ratioTo?: string;
}

/** The rows of the headline table: each Redrive case beside its baselines. */
const rows: Row[] = [
  {
    workload: 'W1 SendMessage, 32 conns (sqlite, process)',
    redrive: 'W1',
    canned: 'canned-send',
    rabbit: 'rabbit-publish',
  },
  {
    workload: 'W1 SendMessage, 32 conns (memory)',
    redrive: 'W1-memory',
    canned: 'canned-send',
    rabbit: 'rabbit-publish',
  },
  {
    workload: 'W1 SendMessage, 32 conns (sqlite, power)',
    redrive: 'W1-power',
    canned: 'canned-send',
    rabbit: 'rabbit-publish',
  },
  { workload: 'W2 SendMessageBatch×10, 32 conns', redrive: 'W2', canned: 'canned-batch' },
  { workload: 'W3 cycle, single sends (consumed)', redrive: 'W3', rabbit: 'rabbit-cycle' },
  { workload: 'W3b cycle, batched sends (consumed)', redrive: 'W3b', rabbit: 'rabbit-cycle' },
  { workload: 'W3 cycle at 50% of W3 rate', redrive: 'W3-half' },
  // --threads (docs/scaling.md): W1 under wrk (one C thread, so the client leaves a core), then two HTTP threads.
  { workload: 'W1 SendMessage, wrk 32 conns, --threads 1', redrive: 'W1-wrk' },
  { workload: 'W1 SendMessage, wrk 32 conns, --threads 2', redrive: 'W1-wrk-t2', ratioTo: 'W1-wrk' },
  { workload: 'W3 cycle, --threads 2 (consumed)', redrive: 'W3-t2', ratioTo: 'W3' },
  { workload: 'W5 FIFO cycle, 100 groups (consumed)', redrive: 'W5', rabbit: 'rabbit-cycle', ratioTo: 'W3' },
  { workload: 'W3 cycle, postgres, 1 node (consumed)', redrive: 'W3-pg', rabbit: 'rabbit-cycle', ratioTo: 'W3' },
  { workload: 'W3 cycle, postgres, 2 nodes (consumed)', redrive: 'W3-pg-2', rabbit: 'rabbit-cycle', ratioTo: 'W3' },
  // Redrive's AMQP listener beside RabbitMQ's classic, then quorum queues (the peer to measure against).
  { workload: 'AMQP confirmed publishes, 32 channels (vs classic)', redrive: 'amqp-publish', rabbit: 'rabbit-publish' },
  {
    workload: 'AMQP confirmed publishes, 32 channels (vs quorum)',
    redrive: 'amqp-publish',
    rabbit: 'rabbit-publish-quorum',
  },
  { workload: 'AMQP publish/consume/ack (vs classic)', redrive: 'amqp-cycle', rabbit: 'rabbit-cycle' },
  { workload: 'AMQP publish/consume/ack (vs quorum)', redrive: 'amqp-cycle', rabbit: 'rabbit-cycle-quorum' },
];

export const int = (n: number | undefined) => (n === undefined ? 'n/a' : Math.round(n).toLocaleString('en-US'));
export const pct = (n: number | undefined) => (n === undefined ? 'n/a' : `${Math.round(n)}%`);
export const micros = (n: number | undefined) =>
  n === undefined ? 'n/a' : n < 10 ? n.toFixed(1) : Math.round(n).toString();
export const ms = (n: number | undefined) => (n === undefined ? 'n/a' : n < 10 ? n.toFixed(2) : n.toFixed(1));

export interface TableRow {
  workload: string;
  redrive?: number;
  canned?: number;
  rabbitmq?: number;
  ratio?: number;
  /** What `ratio` divides by when it is not the canned server: `W3`, or the small backlog's drain. */
  ratioTo?: string;
  serverCpu?: number;
  clientCpu?: number;
  serverMicrosPerMessage?: number;
  /**
   * Canned server µs/msg over Redrive's (or the `ratioTo` case's over this one's): the ratio
   * Redrive would reach if both servers were CPU-bound on a core of their own. Steadier than
   * `ratio` on a busy machine.
   */
  cpuRatio?: number;
  /** CPU of the PostgreSQL server (all its processes), for the Postgres rows. */
  databaseCpu?: number;
  otherCpu?: number;
  latencyP50?: number;
  latencyP99?: number;
}

export function tableRows(outcomes: Record<string, Outcome>, backlog: BacklogFigures[] = []): TableRow[] {
  const out: TableRow[] = rows.map((row) => {
    const r = outcomes[row.redrive]?.summary;
    const c = row.canned ? outcomes[row.canned]?.summary : undefined;
    const q = row.rabbit ? outcomes[row.rabbit]?.summary : undefined;
    const base = row.ratioTo ? outcomes[row.ratioTo]?.summary : undefined;
    return {
      workload: row.workload,
      redrive: r?.rate,
      canned: c?.rate,
      rabbitmq: q?.rate,
      ratio: r && c ? r.rate / c.rate : r && base ? r.rate / base.rate : undefined,
      ratioTo: row.ratioTo,
      serverCpu: r?.serverCpu,
      clientCpu: r?.clientCpu,
      serverMicrosPerMessage: r?.serverMicrosPerMessage,
      cpuRatio:
        r?.serverMicrosPerMessage && c?.serverMicrosPerMessage
          ? c.serverMicrosPerMessage / r.serverMicrosPerMessage
          : r?.serverMicrosPerMessage && base?.serverMicrosPerMessage
            ? base.serverMicrosPerMessage / r.serverMicrosPerMessage
            : undefined,
      databaseCpu: r?.databaseCpu,
      otherCpu: r?.otherCpu,
      latencyP50: r?.latencyP50,
      latencyP99: r?.latencyP99,
    };
  });
  // W4: the drains, the largest compared with the smallest; one run each, no medians.
  const smallest = backlog.length > 1 ? backlog.reduce((a, b) => (a.messages <= b.messages ? a : b)) : undefined;
  for (const b of [...backlog].sort((x, y) => y.messages - x.messages)) {
    const d = b.drain;
    out.push({
      workload: `W4 drain of ${int(b.messages)}${d.complete ? '' : ' (INCOMPLETE)'}`,
      redrive: d.rate,
      ratio: smallest && smallest !== b ? d.rate / smallest.drain.rate : undefined,
      ratioTo: smallest && smallest !== b ? `${Math.round(smallest.messages / 1000)}k drain` : undefined,
      cpuRatio:
        smallest && smallest !== b && d.serverMicrosPerMessage && smallest.drain.serverMicrosPerMessage
          ? smallest.drain.serverMicrosPerMessage / d.serverMicrosPerMessage
          : undefined,
      serverCpu: d.serverCpu,
      clientCpu: d.clientCpu,
      serverMicrosPerMessage: d.serverMicrosPerMessage,
      otherCpu: d.otherCpu,
    });
  }
  return out;
}

/** W4's own figures: preload, restarts, memory. */
export function formatBacklog(backlog: BacklogFigures[]): string {
  const mib = (n: number | undefined) => (n === undefined ? 'n/a' : `${Math.round(n / 2 ** 20)} MiB`);
  const lines = backlog.map((b) => [
    int(b.messages),
    `${int(b.preload.rate)} msg/s (${b.preload.seconds.toFixed(1)} s)${b.preload.complete ? '' : ' INCOMPLETE'}`,
    `${int(b.drain.rate)} msg/s (${b.drain.seconds.toFixed(1)} s)${b.drain.complete ? '' : ' INCOMPLETE'}`,
    `${b.restartAfterSigterm.startSeconds.toFixed(2)} s`,
    `${b.restartAfterSigkill.startSeconds.toFixed(2)} s`,
    `${b.restartAfterSigterm.shutdownSeconds.toFixed(2)} s`,
    mib(b.maxRssBytes.preload),
    mib(b.maxRssBytes.restart),
    mib(b.maxRssBytes.drain),
    mib(b.maxRssBytes.all),
    mib(b.dataBytes),
    b.depthAfterRestart === undefined ? 'n/a' : int(b.depthAfterRestart),
  ]);
  return markdown(
    [
      'backlog',
      'preload',
      'drain',
      'restart (SIGTERM)',
      'restart (SIGKILL)',
      'shutdown',
      'max RSS preload',
      'restart',
      'drain',
      'max RSS',
      'data on disk',
      'depth after restart',
    ],
    lines,
  );
}

/** A Markdown table, so the same text goes to the terminal and into docs/performance.md. */
export function formatTable(table: TableRow[]): string {
  const header = [
    'workload',
    'Redrive msg/s',
    'canned ceiling',
    'RabbitMQ',
    'ratio',
    'server CPU',
    'client CPU',
    'server µs/msg',
    'db CPU',
    'others CPU',
    'p50 / p99 ms',
  ];
  const lines = table.map((t) => [
    t.workload,
    int(t.redrive),
    int(t.canned),
    int(t.rabbitmq),
    t.ratio === undefined ? 'n/a' : `${Math.round(100 * t.ratio)}%${t.ratioTo ? ` of ${t.ratioTo}` : ''}`,
    pct(t.serverCpu),
    pct(t.clientCpu),
    micros(t.serverMicrosPerMessage),
    t.databaseCpu === undefined ? '' : pct(t.databaseCpu),
    pct(t.otherCpu),
    t.latencyP50 === undefined ? '' : `${ms(t.latencyP50)} / ${ms(t.latencyP99)}`,
  ]);
  return markdown(header, lines);
}

/** The baselines' own CPU figures: a ceiling that is client-bound is not a server ceiling. */
export function formatBaselines(outcomes: Record<string, Outcome>): string {
  const ids = [
    'canned-send',
    'canned-batch',
    'fauxqs-send',
    'fauxqs-cycle',
    'rabbit-publish',
    'rabbit-cycle',
    'rabbit-publish-quorum',
    'rabbit-cycle-quorum',
  ];
  const lines = ids.map((id) => {
    const o = outcomes[id];
    const s = o?.summary;
    return [
      id,
      s ? int(s.rate) : `n/a${o?.skipped ? ` (${o.skipped})` : ''}`,
      int(s?.requestsPerSecond),
      pct(s?.serverCpu),
      pct(s?.clientCpu),
      micros(s?.serverMicrosPerMessage),
      pct(s?.otherCpu),
      s?.latencyP50 === undefined ? '' : `${ms(s.latencyP50)} / ${ms(s.latencyP99)}`,
    ];
  });
  return markdown(
    ['baseline', 'msg/s', 'req/s', 'server CPU', 'client CPU', 'server µs/msg', 'others CPU', 'p50 / p99 ms'],
    lines,
  );
}

export function markdown(header: string[], lines: string[][]): string {
  const all = [header, ...lines];
  const widths = header.map((_, i) => Math.max(...all.map((l) => l[i]!.length)));
  const fmt = (l: string[]) =>
    `| ${l.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (i === 0 ? '-'.repeat(w + 2) : `${'-'.repeat(w + 1)}:`)).join('|')}|`;
  return [fmt(header), rule, ...lines.map(fmt)].join('\n');
}

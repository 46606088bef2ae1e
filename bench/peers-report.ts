import { int, markdown, micros, ms, type Outcome, type Summary } from './report.js';

/**
 * Every system under W1's load (single sends, 32 connections) and under W3's (16
 * producers, 16 consumers, send/receive/delete), from the same run: msg/s beside the CPU
 * each message cost the server. CPU per message is the figure that holds on a busy
 * machine: it does not depend on how much of a core the server got. For PostgreSQL the
 * database's processes are included; pg-boss is a library, so its figure is the load
 * child's CPU (pg-boss and the load generator) plus the database's; RabbitMQ's is its
 * Erlang VM (beam.smp).
 */
const GROUPS: [title: string, redrive: string, ids: [id: string, label: string][]][] = [
  [
    'W1 single sends',
    'W1',
    [
      ['W1', 'Redrive, SQLite, durable (process)'],
      ['W1-power', 'Redrive, SQLite, durable (power)'],
      ['W1-memory', 'Redrive, in memory'],
      ['fauxqs-send', 'fauxqs, in memory'],
      ['canned-send', 'canned Node HTTP server (no queue work)'],
      ['rabbit-publish', 'RabbitMQ classic, confirms (AMQP)'],
      ['rabbit-publish-quorum', 'RabbitMQ quorum, confirms (AMQP)'],
      ['amqp-publish', 'Redrive AMQP, confirms'],
    ],
  ],
  [
    'W3 send/receive/delete',
    'W3',
    [
      ['W3', 'Redrive, SQLite, durable (process)'],
      ['fauxqs-cycle', 'fauxqs, in memory'],
      ['rabbit-cycle', 'RabbitMQ classic (AMQP publish/consume/ack)'],
      ['rabbit-cycle-quorum', 'RabbitMQ quorum (AMQP publish/consume/ack)'],
      ['amqp-cycle', 'Redrive AMQP publish/consume/ack'],
      ['W3-pg', 'Redrive, PostgreSQL, 1 node (node + database)'],
      ['pgboss-cycle', 'pg-boss (load child + database)'],
    ],
  ],
];

/** The CPU one message cost: the server's, plus the database's where there is one; pg-boss's lives in the load child. */
export function cpuPerMessage(id: string, s: Summary): number | undefined {
  if (id === 'pgboss-cycle')
    return s.clientMicrosPerMessage === undefined
      ? undefined
      : s.clientMicrosPerMessage + (s.databaseMicrosPerMessage ?? 0);
  if (s.serverMicrosPerMessage === undefined) return undefined;
  return s.serverMicrosPerMessage + (s.databaseMicrosPerMessage ?? 0);
}

export function formatPeers(outcomes: Record<string, Outcome>): string {
  const lines: string[][] = [];
  for (const [title, redriveId, ids] of GROUPS) {
    const redrive = outcomes[redriveId]?.summary;
    for (const [id, label] of ids) {
      const s = outcomes[id]?.summary;
      if (!s) continue;
      const cpu = cpuPerMessage(id, s);
      const redriveCpu = redrive && cpuPerMessage(redriveId, redrive);
      lines.push([
        `${title}: ${label}`,
        int(s.rate),
        redrive && id !== redriveId ? `${(redrive.rate / s.rate).toFixed(2)}×` : '',
        micros(cpu),
        redriveCpu && cpu && id !== redriveId ? `${(cpu / redriveCpu).toFixed(2)}×` : '',
        s.walBytesPerMessage === undefined ? '' : int(s.walBytesPerMessage),
        s.commitsPerMessage ? (1 / s.commitsPerMessage).toFixed(1) : '',
        s.latencyP99 === undefined ? '' : ms(s.latencyP99),
      ]);
    }
  }
  return markdown(
    ['system', 'msg/s', 'Redrive ÷ this', 'CPU µs/msg', 'this ÷ Redrive (CPU)', 'WAL B/msg', 'msg/commit', 'p99 ms'],
    lines,
  );
}

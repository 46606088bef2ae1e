import { int, markdown, micros, ms, pct, type Outcome } from './report.js';

/**
 * The PostgreSQL table: Redrive's Postgres rows beside pg-boss (the baseline, same work,
 * same database server) and SQLite's W3 from the same run, with what each message costs
 * the database: CPU and round trips.
 */
const ROWS: [id: string, label: string][] = [
  ['W3-pg', 'Redrive W3, postgres, 1 node'],
  ['W3-pg-2', 'Redrive W3, postgres, 2 nodes'],
  ['W3-pg-2-half', 'Redrive W3, 2 nodes, half rate, send on one node, receive on the other'],
  ['pgboss-cycle', 'pg-boss, 16 senders, 16 fetchers of 10 + complete'],
];

export interface PostgresRow {
  case: string;
  rate?: number;
  /** Rate over pg-boss's from the same run (target: at least 3). */
  vsPgBoss?: number;
  /** Rate over SQLite W3's from the same run (target: at least 0.4). */
  vsSqlite?: number;
  databaseCpu?: number;
  databaseMicrosPerMessage?: number;
  roundTripsPerMessage?: number;
  serverMicrosPerMessage?: number;
  otherCpu?: number;
  latencyP50?: number;
  latencyP99?: number;
}

export function postgresRows(outcomes: Record<string, Outcome>): PostgresRow[] {
  const boss = outcomes['pgboss-cycle']?.summary;
  const sqlite = outcomes.W3?.summary;
  return ROWS.filter(([id]) => outcomes[id]?.summary).map(([id]) => {
    const s = outcomes[id]!.summary!;
    const flatOut = id !== 'W3-pg-2-half' && id !== 'pgboss-cycle';
    return {
      case: id,
      rate: s.rate,
      vsPgBoss: flatOut && boss ? s.rate / boss.rate : undefined,
      vsSqlite: flatOut && sqlite ? s.rate / sqlite.rate : undefined,
      databaseCpu: s.databaseCpu,
      databaseMicrosPerMessage: s.databaseMicrosPerMessage,
      roundTripsPerMessage: s.roundTripsPerMessage,
      serverMicrosPerMessage: s.serverMicrosPerMessage,
      otherCpu: s.otherCpu,
      latencyP50: s.latencyP50,
      latencyP99: s.latencyP99,
    };
  });
}

export function formatPostgres(rows: PostgresRow[]): string {
  const label = new Map(ROWS);
  const ratio = (n: number | undefined) => (n === undefined ? '' : `${n.toFixed(2)}×`);
  return markdown(
    [
      'PostgreSQL',
      'msg/s',
      '÷ pg-boss',
      '÷ SQLite W3',
      'db CPU',
      'db µs/msg',
      'round trips/msg',
      'server µs/msg',
      'others CPU',
      'p50 / p99 ms',
    ],
    rows.map((r) => [
      label.get(r.case) ?? r.case,
      int(r.rate),
      ratio(r.vsPgBoss),
      ratio(r.vsSqlite),
      pct(r.databaseCpu),
      micros(r.databaseMicrosPerMessage),
      r.roundTripsPerMessage === undefined ? 'n/a' : r.roundTripsPerMessage.toFixed(2),
      micros(r.serverMicrosPerMessage),
      pct(r.otherCpu),
      r.latencyP50 === undefined ? '' : `${ms(r.latencyP50)} / ${ms(r.latencyP99)}`,
    ]),
  );
}

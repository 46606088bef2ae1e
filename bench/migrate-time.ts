import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { migrate as migratePostgres, postgresMigrations } from '../src/stores/postgres/migrate.js';
import { PostgresStore } from '../src/stores/postgres/store.js';
import { openDatabase } from '../src/stores/sqlite/driver.js';
import { migrate, sqliteMigrations } from '../src/stores/sqlite/migrate.js';
import { SqliteStore } from '../src/stores/sqlite/store.js';

/**
 * How long a store's last schema step takes on a large database: a database at the step
 * before it is filled with `messages` messages of `bytes`-byte bodies over ten queues (a
 * tenth received, in flight with a receipt), then opened by the store, which migrates it;
 * the time of that open is reported, and per million messages. `postgres` makes the
 * database on the server of BENCH_POSTGRES_URL (a maintenance database URL) and drops it after.
 *
 *   node dist/bench/migrate-time.js [messages=1000000] [bytes=256] [sqlite|postgres]
 */
const args = process.argv.slice(2);
const [messages = 1_000_000, bytes = 256] = args.filter((a) => /^\d+$/.test(a)).map(Number);
const report = (latest: number, size: number, filled: number, seconds: number) =>
  console.log(
    `step ${latest} on ${messages.toLocaleString('en')} messages of ${bytes} bytes (${(size / 2 ** 20).toFixed(0)} MiB, filled in ${filled.toFixed(1)} s): ` +
      `${seconds.toFixed(1)} s, ${((seconds * 1_000_000) / messages).toFixed(1)} s per million messages`,
  );
if (args.includes('postgres')) await postgres();
else await sqlite();

async function postgres(): Promise<void> {
  const admin = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `redrive_migrate_${randomBytes(6).toString('hex')}`;
  const url = new URL(admin);
  url.pathname = `/${name}`;
  const run = async (target: string, fn: (c: pg.Client) => Promise<unknown>) => {
    const c = new pg.Client({ connectionString: target });
    await c.connect();
    try {
      return await fn(c);
    } finally {
      await c.end();
    }
  };
  await run(admin, (c) => c.query(`CREATE DATABASE ${name}`));
  try {
    const latest = postgresMigrations().length;
    const t0 = Date.now();
    const size = (await run(url.toString(), async (c) => {
      await migratePostgres(c, 'us-east-1', latest - 1);
      await c.query(`INSERT INTO queues (account_id, region, name, fifo, attributes, tags, created_at, modified_at)
        SELECT '000000000000', 'us-east-1', 'q' || q, false, '{}', '{}', 1, 1 FROM generate_series(1, 10) q`);
      await c.query(
        `INSERT INTO messages (queue_id, message_id, body, md5_body, sender_id, sent_at, visible_at, receive_count,
                               received_at, receipt_token)
         SELECT 1 + i % 10, lpad(i::text, 8, '0') || '-0000-4000-8000-000000000000', repeat('x', $2),
                'fafb00f5732ab283681e124bf8747ed1', '000000000000', 1700000000000 + i,
                CASE WHEN i % 10 = 0 THEN 1800000000000 ELSE 1700000000000 + i END, (i % 10 = 0)::int,
                CASE WHEN i % 10 = 0 THEN 1700000000000 + i END,
                CASE WHEN i % 10 = 0 THEN substr(md5(i::text), 1, 16) END
           FROM generate_series(1, $1) i`,
        [messages, bytes],
      );
      await c.query('VACUUM ANALYZE messages');
      return Number((await c.query(`SELECT pg_database_size(current_database()) AS b`)).rows[0].b);
    })) as number;
    const filled = (Date.now() - t0) / 1000;
    const start = process.hrtime.bigint();
    const store = await PostgresStore.open({ url: url.toString(), defaultRegion: 'us-east-1' });
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    await store.close();
    report(latest, size, filled, seconds);
  } finally {
    await run(admin, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  }
}

async function sqlite(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'redrive-migrate-time-'));
  const path = join(dir, 'redrive.db');
  try {
    const latest = sqliteMigrations().length;
    const db = openDatabase(path);
    db.pragma('journal_mode = WAL');
    migrate(db, path, 'us-east-1', latest - 1);
    const t0 = Date.now();
    db.transaction(() => {
      for (let q = 1; q <= 10; q++)
        db.prepare(
          `INSERT INTO queues (account_id, region, name, fifo, attributes, tags, created_at, modified_at)
         VALUES ('000000000000', 'us-east-1', ?, 0, '{}', '{}', 1, 1)`,
        ).run(`q${q}`);
      db.prepare(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
       INSERT INTO messages (queue_id, message_id, body, md5_body, sender_id, sent_at, visible_at, receive_count,
                             received_at, receipt_token)
       SELECT 1 + i % 10, printf('%08d-0000-4000-8000-000000000000', i), printf('%.*c', ?, 'x'),
              'fafb00f5732ab283681e124bf8747ed1', '000000000000', 1700000000000 + i,
              CASE WHEN i % 10 = 0 THEN 1800000000000 ELSE 1700000000000 + i END, i % 10 = 0,
              CASE WHEN i % 10 = 0 THEN 1700000000000 + i END,
              CASE WHEN i % 10 = 0 THEN substr(hex(randomblob(8)), 1, 16) END
         FROM n`,
      ).run(messages, bytes);
    })();
    db.close();
    const filled = (Date.now() - t0) / 1000;
    const size = statSync(path).size;
    const start = process.hrtime.bigint();
    const store = new SqliteStore({ path });
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    await store.close();
    report(latest, size, filled, seconds);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

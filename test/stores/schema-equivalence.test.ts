/**
 * A database upgraded from any earlier schema version ends with the schema a fresh one
 * gets, on both SQL stores: each old database is made by the migrations up to version k,
 * holds a few rows, and is then opened by the store, which applies the rest. The
 * fixtures in ./fixtures are the schemas a fresh database had when the steps were
 * TypeScript strings (SQLite at version 14, PostgreSQL at 13): the .sql files make
 * exactly those, so the move to files changed no database.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import { readMigrations } from '../../src/stores/migration.js';
import { migrate as migratePostgres, postgresMigrations } from '../../src/stores/postgres/migrate.js';
import { PostgresStore } from '../../src/stores/postgres/store.js';
import { openDatabase, type Database } from '../../src/stores/sqlite/driver.js';
import { migrate as migrateSqlite, sqliteMigrations } from '../../src/stores/sqlite/migrate.js';
import { SqliteStore } from '../../src/stores/sqlite/store.js';
import { createTestDatabase, type TestDatabase } from '../support/postgres.js';
import { tempFile } from './harness.js';
import { postgresSchema, sqliteSchema } from './schema-dump.js';

const fixture = (name: string): string[] =>
  JSON.parse(readFileSync(new URL(`../../../test/stores/fixtures/${name}`, import.meta.url), 'utf8')) as string[];

const REGION = 'eu-west-1';

/**
 * A few rows for a database at any version: two queues (one FIFO) and three messages,
 * one in a group. The columns are those every version has, plus the region once queues
 * have one (with no default, as from that step on).
 */
function oldRows(hasRegion: boolean, bool: (b: boolean) => string): string[] {
  const region = hasRegion ? ['region, ', `'${REGION}', `] : ['', ''];
  return [
    `INSERT INTO queues (account_id, ${region[0]}name, fifo, attributes, tags, created_at, modified_at) VALUES
       ('000000000000', ${region[1]}'plain', ${bool(false)}, '{}', '{}', 1, 1),
       ('000000000000', ${region[1]}'ordered.fifo', ${bool(true)}, '{"FifoQueue":"true"}', '{}', 1, 1)`,
    `INSERT INTO messages (queue_id, message_id, body, md5_body, sender_id, sent_at, visible_at, group_id) VALUES
       (1, 'm1', 'one', 'x', 's', 1, 1, NULL), (1, 'm2', 'two', 'x', 's', 2, 2, NULL), (2, 'm3', 'three', 'x', 's', 3, 3, 'g')`,
  ];
}

describe('SQLite', () => {
  const latest = sqliteMigrations().length;
  const freshSchema = async (): Promise<string[]> => {
    const path = tempFile('fresh.db');
    await new SqliteStore({ path, defaultRegion: REGION }).close();
    const db = openDatabase(path, { readonly: true });
    try {
      return sqliteSchema(db);
    } finally {
      db.close();
    }
  };

  test('the files make the schema the TypeScript steps made (fixture at version 14)', () => {
    const db = openDatabase(':memory:');
    try {
      assert.equal(migrateSqlite(db, ':memory:', REGION, 14), 14);
      assert.deepEqual(sqliteSchema(db), fixture('sqlite-schema.json'));
    } finally {
      db.close();
    }
  });

  test('an in-memory database (the memory store) gets the schema a file gets', async () => {
    const memory = openDatabase(':memory:');
    try {
      migrateSqlite(memory, ':memory:', REGION);
      assert.deepEqual(sqliteSchema(memory), await freshSchema());
    } finally {
      memory.close();
    }
  });

  test('a database from every earlier version upgrades to the schema of a fresh one, keeping its rows', async () => {
    const fresh = await freshSchema();
    assert.ok(fresh.includes(`user_version ${latest}`));
    for (let k = 1; k < latest; k++) {
      const path = tempFile(`v${k}.db`);
      const db = openDatabase(path);
      assert.equal(migrateSqlite(db, path, REGION, k), k);
      const hasRegion =
        (db.prepare("SELECT count(*) FROM pragma_table_info('queues') WHERE name = 'region'").pluck().get() as number) >
        0;
      for (const sql of oldRows(hasRegion, (b) => (b ? '1' : '0'))) db.exec(sql);
      db.close();
      await new SqliteStore({ path, defaultRegion: REGION }).close();
      const upgraded: Database = openDatabase(path, { readonly: true });
      try {
        assert.deepEqual(sqliteSchema(upgraded), fresh, `upgraded from version ${k}`);
        assert.equal(
          upgraded.prepare('SELECT count(*) FROM messages').pluck().get(),
          3,
          `messages kept from version ${k}`,
        );
        assert.deepEqual(upgraded.prepare('SELECT region FROM queues ORDER BY id').pluck().all(), [REGION, REGION]);
      } finally {
        upgraded.close();
      }
    }
  });
});

describe('PostgreSQL', () => {
  const databases: TestDatabase[] = [];
  after(async () => {
    await Promise.all(databases.map((d) => d.drop()));
  });
  const latest = postgresMigrations().length;

  async function withDatabase<T>(fn: (client: pg.Client, url: string) => Promise<T>): Promise<T> {
    const database = await createTestDatabase();
    databases.push(database);
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      return await fn(client, database.url);
    } finally {
      await client.end();
    }
  }

  test('the files make the schema the TypeScript steps made (fixture at version 13)', async () => {
    await withDatabase(async (client) => {
      assert.equal(await migratePostgres(client, REGION, 13), 13);
      assert.deepEqual(await postgresSchema(client), fixture('postgres-schema.json'));
    });
  });

  test('a database from every earlier version upgrades to the schema of a fresh one, keeping its rows', async () => {
    const fresh = await withDatabase(async (client, url) => {
      await (await PostgresStore.open({ url, defaultRegion: REGION })).close();
      return postgresSchema(client);
    });
    assert.ok(fresh.includes(`migrations ${Array.from({ length: latest }, (_, i) => i + 1).join(',')}`));
    // One database for every version, emptied before each: everything the steps create
    // lives in its public schema.
    await withDatabase(async (client, url) => {
      for (let k = 1; k < latest; k++) {
        await client.query('DROP SCHEMA public CASCADE; CREATE SCHEMA public');
        assert.equal(await migratePostgres(client, REGION, k), k);
        const { rows } = await client.query(
          "SELECT 1 FROM information_schema.columns WHERE table_name = 'queues' AND column_name = 'region'",
        );
        for (const sql of oldRows(rows.length > 0, String)) await client.query(sql);
        await (await PostgresStore.open({ url, defaultRegion: REGION })).close();
        assert.deepEqual(await postgresSchema(client), fresh, `upgraded from version ${k}`);
        assert.equal(
          (await client.query('SELECT count(*)::int AS n FROM messages')).rows[0].n,
          3,
          `messages kept from version ${k}`,
        );
        assert.deepEqual(
          (await client.query('SELECT region FROM queues ORDER BY id')).rows.map((r) => r.region),
          [REGION, REGION],
        );
      }
    });
  });
});

describe('the migration files', () => {
  const folder = (files: Record<string, string>): string => {
    const dir = mkdtempSync(join(tmpdir(), 'redrive-migrations-'));
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    return dir;
  };

  test('are read in order, and a gap in their numbers is refused', () => {
    const steps = readMigrations(folder({ '000002.sql': 'SELECT 2;', '000001.sql': 'SELECT 1;' }));
    assert.deepEqual(
      steps.map((s) => [s.version, s.sql(REGION)]),
      [
        [1, 'SELECT 1;'],
        [2, 'SELECT 2;'],
      ],
    );
    assert.throws(
      () => readMigrations(folder({ '000001.sql': '', '000003.sql': '' })),
      /000003\.sql: expected 000002\.sql/,
    );
    assert.throws(() => readMigrations(folder({ '1.sql': '' })), /1\.sql: expected 000001\.sql/);
    assert.throws(() => readMigrations(folder({})), /no \.sql file/);
  });

  test("name the default region as :'default_region', given as a quoted region name", () => {
    const [step] = readMigrations(folder({ '000001.sql': "INSERT INTO t VALUES (:'default_region');" }));
    assert.ok(step);
    assert.equal(step.sql('ap-south-1'), "INSERT INTO t VALUES ('ap-south-1');");
    assert.throws(() => step.sql("x'); DROP TABLE queues; --"), /invalid default region/);
  });
});

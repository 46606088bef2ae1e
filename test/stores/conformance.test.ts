/**
 * The store conformance suite: every case in ./cases runs against every store. A store
 * passes only if it passes all of them. To add a store, add it to `stores` below.
 */
import { after, describe } from 'node:test';
import { PostgresStore } from '../../src/stores/postgres/store.js';
import { SqliteStore } from '../../src/stores/sqlite/store.js';
import { createTestDatabase, type TestDatabase } from '../support/postgres.js';
import { cases } from './cases/index.js';
import { tempFile, type StoreFactory } from './harness.js';

/** Databases the postgres factory created; each case group gets a fresh one. */
const databases: TestDatabase[] = [];

const stores: Record<string, StoreFactory> = {
  memory: async () => new SqliteStore({ path: ':memory:' }),
  sqlite: async () => new SqliteStore({ path: tempFile('conformance.db') }),
  postgres: async () => {
    const db = await createTestDatabase();
    databases.push(db);
    return PostgresStore.open({ url: db.url });
  },
};

// Runs after every case group's own after() has closed its store.
after(async () => {
  await Promise.all(databases.map((db) => db.drop()));
});

for (const [name, open] of Object.entries(stores)) {
  describe(`store conformance: ${name}`, () => {
    for (const define of cases) define(open);
  });
}

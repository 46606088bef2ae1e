/**
 * The store conformance suite: every case in ./cases runs against every store. A store
 * passes only if it passes all of them. To add a store, add it to `stores` below.
 */
import { describe } from 'node:test';
import { SqliteStore } from '../../src/stores/sqlite/sqlite-store.js';
import { cases } from './cases/index.js';
import { tempFile, type StoreFactory } from './harness.js';

const stores: Record<string, StoreFactory> = {
  memory: async () => new SqliteStore({ path: ':memory:' }),
  sqlite: async () => new SqliteStore({ path: tempFile('conformance.db') }),
};

for (const [name, open] of Object.entries(stores)) {
  describe(`store conformance: ${name}`, () => {
    for (const define of cases) define(open);
  });
}

import { actions } from '../../src/engine/actions/registry.js';
import { ManualClock } from '../../src/engine/kernel/clock.js';
import { Engine } from '../../src/engine/engine.js';
import type { RequestContext } from '../../src/engine/kernel/types.js';
import { SqliteStore } from '../../src/stores/sqlite/store.js';

export const ctx: RequestContext = {
  accountId: '000000000000',
  region: 'us-east-1',
  baseUrl: 'http://localhost:9324',
  requestId: 'r',
};

/** An engine on an in-memory store and a manual clock, driven through the action table. */
export function testEngine(opts: { inflightLimit?: number; fairQueues?: boolean } = {}) {
  const clock = new ManualClock(1_700_000_000_000);
  const engine = new Engine({ store: new SqliteStore({ path: ':memory:' }), clock, region: 'us-east-1', ...opts });
  const call = (action: string, input: Record<string, unknown>, signal?: AbortSignal) =>
    actions[action]!(engine, ctx, input, signal) as Promise<Record<string, any>>;
  return {
    engine,
    clock,
    call,
    close: async () => {
      await engine.close();
      await engine.store.close();
    },
  };
}

/** Lets pending promise callbacks and setImmediate-scheduled commits run. */
export async function settle(turns = 5): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((r) => setImmediate(r));
}

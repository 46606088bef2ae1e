import { dispatch, type ActionInput } from '../engine/actions/registry.js';
import type { Engine } from '../engine/engine.js';
import type { Cancellation } from '../engine/messages/long-poll.js';
import type { RequestContext } from '../engine/kernel/types.js';

/**
 * What a protocol adapter hands a decoded action to. In one thread it is the engine's
 * dispatch; with `--threads N` an HTTP thread's calls go to the owner thread, which runs
 * that same dispatch (src/server/threads/, docs/scaling.md).
 */
export type Dispatch = (
  ctx: RequestContext,
  action: string,
  input: ActionInput,
  signal?: Cancellation,
) => Promise<Record<string, unknown>>;

/** The engine's own dispatch, in this thread. */
export function engineDispatch(engine: Engine): Dispatch {
  return (ctx, action, input, signal) => dispatch(engine, ctx, action, input, signal);
}

import type { EngineContext } from '../context/engine-context.js';
import { parseQueueUrl, queueUrl } from '../kernel/addressing.js';
import { errors } from '../kernel/errors.js';
import type { QueueRecord, RequestContext } from '../kernel/types.js';
import { accessDenied, policyAllows } from './access-policy.js';

/**
 * The queue a request names, and whether its caller may use it: every action starts
 * here. A caller from another account needs the queue's access policy to allow the action.
 */

/**
 * The queue a URL names when the store has it in memory (nearly every request), without
 * a promise: `knownQueue(engine, ctx, url) ?? (await resolveQueue(engine, ctx, url))`.
 * Throws as resolveQueue does for a bad URL or a caller without access.
 */
export function knownQueue(engine: EngineContext, ctx: RequestContext, url: unknown): QueueRecord | undefined {
  const queue = engine.store.queues.cached?.(parseQueueUrl(url, ctx));
  if (queue) checkAccess(engine, ctx, queue);
  return queue;
}

export async function resolveQueue(engine: EngineContext, ctx: RequestContext, url: unknown): Promise<QueueRecord> {
  const queue = await engine.store.queues.get(parseQueueUrl(url, ctx));
  if (!queue) throw errors.queueDoesNotExist();
  checkAccess(engine, ctx, queue);
  return queue;
}

/** Throws SQS's AccessDenied unless the caller owns the queue or its policy allows the action. */
export function checkAccess(engine: EngineContext, ctx: RequestContext, queue: QueueRecord): void {
  if (queue.accountId === ctx.accountId) return;
  if (!ctx.action || !policyAllows(queue, engine.arnOf(queue), ctx.accountId, ctx.action)) {
    throw accessDenied(urlOf(engine, ctx, queue));
  }
}

/** The queue's URL as this caller addresses it (its host, its region). */
export function urlOf(
  engine: Pick<EngineContext, 'region'>,
  ctx: RequestContext,
  queue: Pick<QueueRecord, 'accountId' | 'region' | 'name'>,
): string {
  return queueUrl(ctx, queue, engine.region);
}

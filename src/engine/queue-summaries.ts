import type { Engine } from './engine.js';
import { decodeToken, encodeToken } from './queue-actions.js';
import { sourcesByTarget } from './redrive-policy.js';
import { exchangeTargetNames } from './amqp/dead-letter-targets.js';
import type { QueueRecord, RequestContext } from './types.js';
import { intParam } from './validation.js';

/**
 * ListQueueSummaries (a Redrive extension): the caller's queues with their counts and
 * dead-letter relations, up to 1,000 in one request, for the console's overview and the
 * CLI's `dlq list`. Input: QueueNamePrefix, MaxResults (1-1000, default 1000), NextToken.
 * Like ListQueues it lists only the caller's own account, so it needs no queue policy.
 *
 * The counts of every queue on the page come from one store call (messages.depths),
 * whose cost does not grow with the visible backlog. RedrivePolicy is the one in force:
 * the queue's own attribute, or else the server policy's (config file), and
 * RedrivePolicySource says which; DeadLetterSourceQueueUrls are the queues of the
 * account whose policy in force names this queue, or whose AMQP dead-letter exchange
 * reaches it. A queue with a dead-letter exchange has DeadLetterExchange,
 * DeadLetterRoutingKey (if set) and DeadLetterTargetQueueNames, the queues it reaches.
 *
 * Like ListQueues it lists the caller's region; `AllRegions: true` lists every region of
 * the account instead (the console's overview), ordered by name then region. Each
 * summary names its `Region`.
 */
export async function listQueueSummaries(engine: Engine, ctx: RequestContext, input: Record<string, unknown>) {
  const prefix = input.QueueNamePrefix === undefined || input.QueueNamePrefix === null ? '' : String(input.QueueNamePrefix);
  const limit = intParam(input.MaxResults, 'MaxResults', 1, 1000) ?? 1000;
  const after = decodeToken(input.NextToken);
  const allRegions = input.AllRegions === true;
  const rows = allRegions ? await everyRegion(engine, ctx, prefix, after, limit + 1) : await engine.store.queues.list(ctx, prefix, after, limit + 1);
  const page = rows.slice(0, limit);
  const now = engine.clock.now();
  const [depths, sources] = await Promise.all([
    engine.store.messages.depths(page.map((q) => q.id), now),
    page.length ? sourcesByTarget(engine, { accountId: ctx.accountId, region: allRegions ? undefined : ctx.region }) : new Map<string, QueueRecord[]>(),
  ]);
  const exchangeTargets = new Map(await Promise.all(page.filter((q) => engine.settingsOf(q).deadLetterExchange !== undefined)
    .map(async (q) => [q.id, await exchangeTargetNames(engine, q)] as const)));
  const Queues = page.map((q) => {
    const d = depths.get(q.id);
    const arn = engine.arnOf(q);
    const settings = engine.settingsOf(q);
    const out: Record<string, unknown> = {
      QueueUrl: engine.urlOf(ctx, q),
      QueueName: q.name,
      QueueArn: arn,
      Region: q.region,
      FifoQueue: q.fifo,
      ApproximateNumberOfMessages: d?.visible ?? 0,
      ApproximateNumberOfMessagesNotVisible: d?.inflight ?? 0,
      ApproximateNumberOfMessagesDelayed: d?.delayed ?? 0,
      DeadLetterSourceQueueUrls: (sources.get(arn) ?? []).map((s) => engine.urlOf(ctx, s)),
    };
    if (d?.oldestSentAt !== undefined) out.ApproximateAgeOfOldestMessage = Math.max(0, Math.floor((now - d.oldestSentAt) / 1000));
    if (settings.targetArn !== undefined && settings.maxReceiveCount !== undefined) {
      out.RedrivePolicy = JSON.stringify({ deadLetterTargetArn: settings.targetArn, maxReceiveCount: settings.maxReceiveCount });
      out.RedrivePolicySource = q.attributes.RedrivePolicy ? 'queue' : `policy:${settings.policy?.name ?? ''}`;
    }
    if (settings.deadLetterExchange !== undefined) {
      // AMQP's x-dead-letter-exchange: source -> exchange -> the queues it reaches.
      out.DeadLetterExchange = settings.deadLetterExchange;
      if (settings.deadLetterRoutingKey !== undefined) out.DeadLetterRoutingKey = settings.deadLetterRoutingKey;
      out.DeadLetterTargetQueueNames = exchangeTargets.get(q.id) ?? [];
    }
    return out;
  });
  const out: Record<string, unknown> = { Queues };
  if (rows.length > limit) out.NextToken = encodeToken(allRegions ? regionalKey(page[page.length - 1]!) : page[page.length - 1]!.name);
  return out;
}

/** The position of a queue in the all-regions order: name, then region (a NUL sorts before any name character). */
const regionalKey = (q: QueueRecord) => `${q.name}\u0000${q.region}`;

/**
 * The account's queues of every region, from after `after` in the all-regions order. It
 * reads every queue, as sourcesByTarget already does for the same page: this is the
 * console's overview, not a hot path.
 */
async function everyRegion(engine: Engine, ctx: RequestContext, prefix: string, after: string | undefined, limit: number): Promise<QueueRecord[]> {
  const mine = (await engine.store.queues.all())
    .filter((q) => q.accountId === ctx.accountId && q.name.startsWith(prefix) && (after === undefined || regionalKey(q) > after));
  return mine.sort((a, b) => (regionalKey(a) < regionalKey(b) ? -1 : 1)).slice(0, limit);
}

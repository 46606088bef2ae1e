import type { ActionEngine } from './action-engine.js';
import type { ActionInputs } from './action-inputs.js';
import { decodeToken, encodeToken } from './queue-actions.js';
import { sourcesByTarget } from '../dead-letters/redrive-policy.js';
import { exchangeTargetNames } from '../dead-letters/dead-letter-exchange.js';
import { errors } from '../kernel/errors.js';
import { NO_RATES, queueRates, type QueueRates } from '../activity/activity-rates.js';
import {
  type Candidate,
  matchNames,
  needsAllDepths,
  needsAllRates,
  pageOf,
  parseOverviewQuery,
  QUERY_INPUTS,
  totalDepth,
} from '../activity/queue-overview.js';
import type { QueueDepth, QueueRecord, RequestContext } from '../kernel/types.js';
import { intParam } from '../queues/validation.js';
import { urlOf } from '../queues/queue-lookup.js';

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
 * Rates are the queue's messages per second over the last minute (activity-rates.ts).
 *
 * Like ListQueues it lists the caller's region; `AllRegions: true` lists every region of
 * the account instead, ordered by name then region. Each summary names its `Region`.
 * Any of the overview's inputs (queue-overview.ts) makes it a filtered, sorted query.
 */
export async function listQueueSummaries(
  engine: ActionEngine,
  ctx: RequestContext,
  input: ActionInputs['ListQueueSummaries'],
) {
  const limit = intParam(input.MaxResults, 'MaxResults', 1, 1000) ?? 1000;
  if (QUERY_INPUTS.some((k) => input[k] !== undefined && input[k] !== null)) return overview(engine, ctx, input, limit);
  const prefix =
    input.QueueNamePrefix === undefined || input.QueueNamePrefix === null ? '' : String(input.QueueNamePrefix);
  const after = decodeToken(input.NextToken);
  const allRegions = input.AllRegions === true;
  const rows = allRegions
    ? await everyRegion(engine, ctx, prefix, after, limit + 1)
    : await engine.store.queues.list(ctx, prefix, after, limit + 1);
  const page = rows.slice(0, limit);
  const now = engine.clock.now();
  const [depths, sources, rates] = await Promise.all([
    engine.store.messages.depths(
      page.map((q) => q.id),
      now,
    ),
    page.length
      ? sourcesByTarget(engine, { accountId: ctx.accountId, region: allRegions ? undefined : ctx.region })
      : new Map<string, QueueRecord[]>(),
    queueRates(
      engine,
      page.map((q) => q.id),
    ),
  ]);
  const exchangeTargets = await exchangeTargetsOf(engine, page);
  const out: Record<string, unknown> = {
    Queues: page.map((q) => summary(engine, ctx, q, depths.get(q.id), sources, now, exchangeTargets, rates)),
  };
  if (rows.length > limit)
    out.NextToken = encodeToken(allRegions ? regionalKey(page[page.length - 1]!) : page[page.length - 1]!.name);
  return out;
}

/**
 * The overview's query (any of QUERY_INPUTS given): the account's queues (in every region
 * with AllRegions) filtered, sorted and paged by the server; the NextToken is an offset.
 * Depths and rates are read for the page only, unless a filter or sort needs every match's.
 * With IncludeDeadLetterQueues the answer also holds the dead-letter queues that the
 * filters keep and that hold messages, the most first (the overview's cards), so a refresh
 * is one request.
 */
async function overview(
  engine: ActionEngine,
  ctx: RequestContext,
  input: ActionInputs['ListQueueSummaries'],
  limit: number,
) {
  const query = parseOverviewQuery(input, decodeOffset(input.NextToken), limit);
  const prefix =
    input.QueueNamePrefix === undefined || input.QueueNamePrefix === null ? '' : String(input.QueueNamePrefix);
  const region = input.AllRegions === true ? undefined : ctx.region;
  const now = engine.clock.now();
  const [all, sources] = await Promise.all([
    engine.store.queues.all(),
    sourcesByTarget(engine, { accountId: ctx.accountId, region }),
  ]);
  const candidates: Candidate[] = [];
  for (const queue of all) {
    if (
      queue.accountId !== ctx.accountId ||
      (region !== undefined && queue.region !== region) ||
      !queue.name.startsWith(prefix)
    )
      continue;
    const isDlq = sources.has(engine.arnOf(queue));
    const settings = engine.settingsOf(queue);
    const isSource = settings.targetArn !== undefined || settings.deadLetterExchange !== undefined;
    candidates.push({ queue, role: isDlq && isSource ? 'both' : isDlq ? 'dlq' : isSource ? 'source' : '' });
  }
  const matched = matchNames(query, candidates);
  const withDlqs = input.IncludeDeadLetterQueues === true;
  const depths = await engine.store.messages.depths(needsAllDepths(query) ? matched.map((c) => c.queue.id) : [], now);
  // Sorting by a rate reads every queue's that counted something lately; the others have none.
  const allRates = needsAllRates(query);
  const rates = allRates ? await queueRates(engine) : new Map<number, QueueRates>();
  // The cards' candidates, before pageOf sorts `matched` in place: the dead-letter queues the filters keep.
  const dlqs = withDlqs ? matched.filter((c) => c.role === 'dlq' || c.role === 'both').map((c) => c.queue) : [];
  const { page, total } = pageOf(query, matched, depths, now, rates);
  const missing = [...page.map((c) => c.queue), ...(withDlqs ? dlqs : [])]
    .filter((q) => !depths.has(q.id))
    .map((q) => q.id);
  if (missing.length) for (const [id, d] of await engine.store.messages.depths(missing, now)) depths.set(id, d);
  // Only those holding messages are cards: an empty dead-letter queue needs no attention.
  const holding = dlqs.filter((q) => totalDepth(depths.get(q.id)) > 0);
  holding.sort(
    (a, b) =>
      totalDepth(depths.get(b.id)) - totalDepth(depths.get(a.id)) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
  );
  const cards = holding.slice(0, MAX_DEAD_LETTER_CARDS);
  if (!allRates)
    for (const [id, r] of await queueRates(engine, [...page.map((c) => c.queue.id), ...cards.map((q) => q.id)]))
      rates.set(id, r);
  const exchangeTargets = await exchangeTargetsOf(engine, [...page.map((c) => c.queue), ...cards]);
  const out: Record<string, unknown> = {
    Queues: page.map((c) =>
      summary(engine, ctx, c.queue, depths.get(c.queue.id), sources, now, exchangeTargets, rates),
    ),
    TotalCount: total,
  };
  if (query.offset + page.length < total) out.NextToken = encodeOffset(query.offset + page.length);
  if (withDlqs) {
    out.DeadLetterQueues = cards.map((q) =>
      summary(engine, ctx, q, depths.get(q.id), sources, now, exchangeTargets, rates),
    );
    out.DeadLetterQueueCount = holding.length;
  }
  return out;
}

/** The dead-letter queues an overview answer holds at most (the ones with the most messages). */
const MAX_DEAD_LETTER_CARDS = 100;

const encodeOffset = (offset: number) => Buffer.from(JSON.stringify({ offset })).toString('base64');

function decodeOffset(token: unknown): number {
  if (token === undefined || token === null || token === '') return 0;
  try {
    const { offset } = JSON.parse(Buffer.from(String(token), 'base64').toString('utf8')) as { offset?: unknown };
    if (Number.isSafeInteger(offset) && (offset as number) >= 0) return offset as number;
  } catch {
    // fall through
  }
  throw errors.invalidParameterValue('Invalid NextToken value.');
}

/** The queues each AMQP dead-letter exchange of `queues` reaches, by queue id. */
async function exchangeTargetsOf(engine: ActionEngine, queues: QueueRecord[]): Promise<Map<number, string[]>> {
  return new Map(
    await Promise.all(
      queues
        .filter((q) => engine.settingsOf(q).deadLetterExchange !== undefined)
        .map(async (q) => [q.id, await exchangeTargetNames(engine, q)] as const),
    ),
  );
}

/** One queue as ListQueueSummaries shows it. */
function summary(
  engine: ActionEngine,
  ctx: RequestContext,
  q: QueueRecord,
  d: QueueDepth | undefined,
  sources: Map<string, QueueRecord[]>,
  now: number,
  exchangeTargets: Map<number, string[]>,
  rates: Map<number, QueueRates>,
) {
  const arn = engine.arnOf(q);
  const settings = engine.settingsOf(q);
  const out: Record<string, unknown> = {
    QueueUrl: urlOf(engine, ctx, q),
    QueueName: q.name,
    QueueArn: arn,
    Region: q.region,
    FifoQueue: q.fifo,
    ApproximateNumberOfMessages: d?.visible ?? 0,
    ApproximateNumberOfMessagesNotVisible: d?.inflight ?? 0,
    ApproximateNumberOfMessagesDelayed: d?.delayed ?? 0,
    DeadLetterSourceQueueUrls: (sources.get(arn) ?? []).map((s) => urlOf(engine, ctx, s)),
    Rates: wireRates(rates.get(q.id) ?? NO_RATES),
  };
  // The sources that dead-letter here through an AMQP dead-letter exchange, and which.
  const viaExchange = (sources.get(arn) ?? []).filter((s) => engine.settingsOf(s).deadLetterExchange !== undefined);
  if (viaExchange.length) {
    out.DeadLetterSourceExchanges = viaExchange.map((s) => ({
      QueueUrl: urlOf(engine, ctx, s),
      Exchange: engine.settingsOf(s).deadLetterExchange,
    }));
  }
  if (d?.oldestSentAt !== undefined)
    out.ApproximateAgeOfOldestMessage = Math.max(0, Math.floor((now - d.oldestSentAt) / 1000));
  if (settings.targetArn !== undefined && settings.maxReceiveCount !== undefined) {
    out.RedrivePolicy = JSON.stringify({
      deadLetterTargetArn: settings.targetArn,
      maxReceiveCount: settings.maxReceiveCount,
    });
    out.RedrivePolicySource = q.attributes.RedrivePolicy ? 'queue' : `policy:${settings.policy?.name ?? ''}`;
  }
  if (settings.deadLetterExchange !== undefined) {
    // AMQP's x-dead-letter-exchange: source -> exchange -> the queues it reaches.
    out.DeadLetterExchange = settings.deadLetterExchange;
    if (settings.deadLetterRoutingKey !== undefined) out.DeadLetterRoutingKey = settings.deadLetterRoutingKey;
    out.DeadLetterTargetQueueNames = exchangeTargets.get(q.id) ?? [];
  }
  return out;
}

/** Rates as the extensions name them (docs/extensions.md): messages per second over the last minute. */
export const wireRates = (r: QueueRates) => ({
  Sent: r.sent,
  Received: r.received,
  Deleted: r.deleted,
  DeadLettered: r.deadLettered,
  DeadLetterArrivals: r.deadLetterArrivals,
});

/** The position of a queue in the all-regions order: name, then region (a NUL sorts before any name character). */
const regionalKey = (q: QueueRecord) => `${q.name}\u0000${q.region}`;

/**
 * The account's queues of every region, from after `after` in the all-regions order. It
 * reads every queue, as sourcesByTarget already does for the same page: this is the
 * console's overview, not a hot path.
 */
async function everyRegion(
  engine: ActionEngine,
  ctx: RequestContext,
  prefix: string,
  after: string | undefined,
  limit: number,
): Promise<QueueRecord[]> {
  const mine = (await engine.store.queues.all()).filter(
    (q) =>
      q.accountId === ctx.accountId && q.name.startsWith(prefix) && (after === undefined || regionalKey(q) > after),
  );
  return mine.sort((a, b) => (regionalKey(a) < regionalKey(b) ? -1 : 1)).slice(0, limit);
}

import { errors } from '../kernel/errors.js';
import type { QueueRates } from './activity-rates.js';
import type { QueueDepth, QueueRecord } from '../kernel/types.js';

/**
 * The overview's query over an account's queues (ListQueueSummaries with any of its
 * filter or sort inputs): filtered, sorted and paged by the server, so a console with
 * 100,000 queues fetches one page, not every queue. Pure: the caller supplies the queues,
 * their dead-letter role and, when a filter or sort needs them, their depths or rates.
 */
export interface OverviewQuery {
  /** Case-insensitive part of the name. */
  nameContains: string;
  type?: 'standard' | 'fifo';
  only?: 'WithMessages' | 'DeadLetterQueues' | 'DeadLetterQueuesWithMessages';
  sortBy: SortKey;
  descending: boolean;
  offset: number;
  limit: number;
}

const SORT_KEYS = [
  'Name',
  'Region',
  'Type',
  'Role',
  'Visible',
  'InFlight',
  'Delayed',
  'Oldest',
  'SentRate',
  'ReceivedRate',
  'DeletedRate',
  'DeadLetteredRate',
] as const;
/** The rate each rate sort key orders by (activity-rates.ts). */
const RATE_OF: Partial<Record<SortKey, keyof QueueRates>> = {
  SentRate: 'sent',
  ReceivedRate: 'received',
  DeletedRate: 'deleted',
  DeadLetteredRate: 'deadLettered',
};
export type SortKey = (typeof SORT_KEYS)[number];
const ONLY = ['WithMessages', 'DeadLetterQueues', 'DeadLetterQueuesWithMessages'] as const;
const MAX_NAME_FILTER = 80;

/** The inputs that make a ListQueueSummaries request an overview query. */
export const QUERY_INPUTS = [
  'NameContains',
  'QueueType',
  'Only',
  'SortBy',
  'SortOrder',
  'IncludeDeadLetterQueues',
] as const;

function oneOf<T extends string>(value: unknown, name: string, allowed: readonly T[]): T | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  throw errors.invalidValue(name, value, `must be one of ${allowed.join(', ')}.`);
}

export function parseOverviewQuery(input: Record<string, unknown>, offset: number, limit: number): OverviewQuery {
  const nameContains =
    input.NameContains === undefined || input.NameContains === null ? '' : String(input.NameContains);
  if (nameContains.length > MAX_NAME_FILTER) {
    throw errors.invalidParameterValue(
      `Value for parameter NameContains is invalid. Reason: at most ${MAX_NAME_FILTER} characters.`,
    );
  }
  const type = oneOf(input.QueueType, 'QueueType', ['standard', 'fifo'] as const);
  return {
    nameContains: nameContains.toLowerCase(),
    ...(type && { type }),
    ...(oneOf(input.Only, 'Only', ONLY) && { only: oneOf(input.Only, 'Only', ONLY) }),
    sortBy: oneOf(input.SortBy, 'SortBy', SORT_KEYS) ?? 'Name',
    descending: oneOf(input.SortOrder, 'SortOrder', ['Ascending', 'Descending'] as const) === 'Descending',
    offset,
    limit,
  };
}

/** Whether the query needs every matching queue's depth (a count filter or a count sort), not only the page's. */
export const needsAllDepths = (q: OverviewQuery) =>
  q.only === 'WithMessages' ||
  q.only === 'DeadLetterQueuesWithMessages' ||
  ['Visible', 'InFlight', 'Delayed', 'Oldest'].includes(q.sortBy);

/** Whether the query sorts by a rate, so needs every matching queue's rates, not only the page's. */
export const needsAllRates = (q: OverviewQuery) => RATE_OF[q.sortBy] !== undefined;

export interface Candidate {
  queue: QueueRecord;
  /** '', 'source', 'dlq' or 'both'. */
  role: string;
}

export const totalDepth = (d: QueueDepth | undefined) => (d ? d.visible + d.inflight + d.delayed : 0);

/** The queues the filters other than message counts keep, in the order of `queues`. */
export function matchNames(q: OverviewQuery, candidates: Candidate[]): Candidate[] {
  return candidates.filter(
    ({ queue, role }) =>
      (q.nameContains === '' || queue.name.toLowerCase().includes(q.nameContains)) &&
      (q.type === undefined || queue.fifo === (q.type === 'fifo')) &&
      (q.only === undefined || q.only === 'WithMessages' || role === 'dlq' || role === 'both'),
  );
}

const byName = (a: QueueRecord, b: QueueRecord) =>
  a.name < b.name ? -1 : a.name > b.name ? 1 : a.region < b.region ? -1 : a.region > b.region ? 1 : 0;

/** Applies the count filter, sorts (ties by name, then region) and returns the page with the number that matched. */
export function pageOf(
  q: OverviewQuery,
  matched: Candidate[],
  depths: Map<number, QueueDepth>,
  now: number,
  rates = new Map<number, QueueRates>(),
): { page: Candidate[]; total: number } {
  const rows =
    q.only === 'WithMessages' || q.only === 'DeadLetterQueuesWithMessages'
      ? matched.filter((c) => totalDepth(depths.get(c.queue.id)) > 0)
      : matched;
  const key = sortValue(q.sortBy, depths, now, rates);
  const sign = q.descending ? -1 : 1;
  rows.sort((a, b) => {
    const [x, y] = [key(a), key(b)];
    const c = x < y ? -1 : x > y ? 1 : 0;
    return sign * c || byName(a.queue, b.queue);
  });
  return { page: rows.slice(q.offset, q.offset + q.limit), total: rows.length };
}

function sortValue(
  by: SortKey,
  depths: Map<number, QueueDepth>,
  now: number,
  rates: Map<number, QueueRates>,
): (c: Candidate) => string | number {
  const rate = RATE_OF[by];
  if (rate) return (c) => rates.get(c.queue.id)?.[rate] ?? 0;
  switch (by) {
    case 'Name':
      return (c) => c.queue.name;
    case 'Region':
      return (c) => c.queue.region;
    case 'Type':
      return (c) => (c.queue.fifo ? 'fifo' : 'standard');
    case 'Role':
      return (c) => c.role;
    case 'Visible':
      return (c) => depths.get(c.queue.id)?.visible ?? 0;
    case 'InFlight':
      return (c) => depths.get(c.queue.id)?.inflight ?? 0;
    case 'Delayed':
      return (c) => depths.get(c.queue.id)?.delayed ?? 0;
    case 'Oldest':
      return (c) => {
        const sent = depths.get(c.queue.id)?.oldestSentAt;
        return sent === undefined ? -1 : now - sent;
      };
    default:
      return (c) => c.queue.name;
  }
}

import { MESSAGE_TTL_ATTRIBUTE } from '../policies/dead-letter-settings.js';
import type { Death, DeathReason, StoredMessage } from '../kernel/types.js';

/**
 * A message's dead-letter history, as RabbitMQ keeps it in x-death: newest first, one
 * entry per {queue, reason}, so a message that keeps dying does not grow without bound.
 * Pure functions, shared by every path that dead-letters.
 */

export interface DeathEvent {
  queue: string;
  queueArn: string;
  reason: DeathReason;
  time: number;
  rejectReason?: string;
  originalTtlSeconds?: number;
  /** AMQP messages: what x-death records of the first death per {queue, reason}. */
  exchange?: string;
  routingKeys?: string[];
  originalExpiration?: string;
}

/** The message's own TTL (send attribute) a death records; it applies only until the first death. */
export function originalTtlSeconds(m: Pick<StoredMessage, 'systemAttributes' | 'deaths'>): number | undefined {
  const v = m.systemAttributes?.[MESSAGE_TTL_ATTRIBUTE]?.StringValue;
  return v === undefined || m.deaths?.length ? undefined : Number(v);
}

/** The history with `e` recorded: its entry counted and moved to the front, or a new one there. */
export function recordDeath(history: Death[] | undefined, e: DeathEvent): Death[] {
  const list = history ?? [];
  const i = list.findIndex((d) => d.queueArn === e.queueArn && d.reason === e.reason);
  if (i < 0) {
    const entry: Death = {
      queue: e.queue,
      queueArn: e.queueArn,
      reason: e.reason,
      count: 1,
      firstTime: e.time,
      lastTime: e.time,
    };
    if (e.rejectReason !== undefined) entry.rejectReason = e.rejectReason;
    if (e.originalTtlSeconds !== undefined) entry.originalTtlSeconds = e.originalTtlSeconds;
    if (e.exchange !== undefined) entry.exchange = e.exchange;
    if (e.routingKeys !== undefined) entry.routingKeys = e.routingKeys;
    if (e.originalExpiration !== undefined) entry.originalExpiration = e.originalExpiration;
    return [entry, ...list];
  }
  const old = list[i]!;
  const entry: Death = { ...old, count: old.count + 1, lastTime: e.time };
  if (e.rejectReason !== undefined) entry.rejectReason = e.rejectReason;
  return [entry, ...list.slice(0, i), ...list.slice(i + 1)];
}

/**
 * Whether sending a message with this (already updated) history to `targetArn` closes a
 * dead-letter cycle with no rejection in it, RabbitMQ's rule: walking back from the
 * newest death, the target is reached before any `rejected` death. A rejection means a
 * consumer was involved, so the message may go round again.
 */
export function closesCycle(history: Death[], targetArn: string): boolean {
  for (const d of history) {
    if (d.reason === 'rejected') return false;
    if (d.queueArn === targetArn) return true;
  }
  return false;
}

export interface DeathSummary {
  queue: string;
  queueArn: string;
  reason: DeathReason;
  time: number;
}

/**
 * The first death (x-first-death-*). Entries move to the front when they count again, so
 * it is the entry that started earliest, not necessarily the last one.
 */
export function firstDeath(history: Death[] | undefined): DeathSummary | undefined {
  const first = firstDeathEntry(history);
  return first && { queue: first.queue, queueArn: first.queueArn, reason: first.reason, time: first.firstTime };
}

/** The entry of the first death (the one that started earliest). */
export function firstDeathEntry(history: Death[] | undefined): Death | undefined {
  if (!history?.length) return undefined;
  let first = history[0]!;
  for (const d of history) if (d.firstTime <= first.firstTime) first = d;
  return first;
}

/** The latest death (x-last-death-*): the front entry. */
export function lastDeath(history: Death[] | undefined): DeathSummary | undefined {
  const d = history?.[0];
  return d && { queue: d.queue, queueArn: d.queueArn, reason: d.reason, time: d.lastTime };
}

/** Opt-in system attribute names a receive may ask for; `All` does not include them. */
const DEATH_ATTRIBUTE_NAMES = [
  'RedriveDeathHistory',
  'RedriveFirstDeathQueue',
  'RedriveFirstDeathReason',
  'RedriveLastDeathQueue',
  'RedriveLastDeathReason',
] as const;

/** The death attributes of `m` among `wanted`, as strings (the history as JSON). */
export function deathAttributes(
  m: Pick<StoredMessage, 'deaths'>,
  wanted: (name: string) => boolean,
): Record<string, string> {
  const out: Record<string, string> = {};
  if (!m.deaths?.length) return out;
  const first = firstDeath(m.deaths)!;
  const last = lastDeath(m.deaths)!;
  const values: Record<(typeof DEATH_ATTRIBUTE_NAMES)[number], string> = {
    RedriveDeathHistory: JSON.stringify(m.deaths),
    RedriveFirstDeathQueue: first.queue,
    RedriveFirstDeathReason: first.reason,
    RedriveLastDeathQueue: last.queue,
    RedriveLastDeathReason: last.reason,
  };
  for (const name of DEATH_ATTRIBUTE_NAMES) if (wanted(name)) out[name] = values[name];
  return out;
}

/**
 * Standard queues hand out older messages first, as SQS does: a message whose visibility
 * timeout ran out comes back before the messages sent after it, although those became
 * visible earlier. The ready index orders messages by the time they became visible, so a
 * receive reads a window of the first ready messages in that order and takes the oldest
 * sent (lowest position) of them. The window bounds the cost whatever the backlog; with
 * a backlog deeper than the window, a returning message waits behind newer ones that
 * became visible before it (docs: README, differences from SQS).
 */
const READY_WINDOW_EXTRA = 50;

/** How many ready messages a receive of `max` reads to choose from. */
export function readyWindow(max: number): number {
  return max + READY_WINDOW_EXTRA;
}

/** A ready message as the planner sees it. */
export interface ReadyRow {
  seq: number;
  receiveCount: number;
  groupId: string | null;
}

/**
 * Fair queues (docs/fair-queues.md): the noisy message groups of a standard queue, each
 * with its messages in flight, as the engine judged them (src/engine/messages/fair-queues.ts).
 */
export type NoisyGroups = ReadonlyMap<string, number>;

/**
 * A fair receive also looks for ready messages of quiet groups behind a noisy group's
 * backlog: it walks the queue's groups (the index on group and position) up to this many,
 * taking the first ready messages of each group that is not noisy.
 */
export const FAIR_GROUPS_SCANNED = 1000;

/**
 * The order in which a receive takes ready messages. Without noisy groups: oldest sent
 * first (lowest position). With them: messages of quiet groups and messages without a
 * group first, oldest sent first; then the noisy groups' messages, the group with the
 * fewest in flight first, as SQS documents. Duplicates (a row read twice) are dropped.
 */
export function takeOrder<R extends ReadyRow>(rows: readonly R[], noisy?: NoisyGroups): R[] {
  const seen = new Set<number>();
  const unique = rows.filter((r) => !seen.has(r.seq) && seen.add(r.seq));
  if (!noisy?.size) return unique.sort((a, b) => a.seq - b.seq);
  const ranking = new Map(noisyRanking(noisy).map((g, i) => [g, i + 1]));
  const rank = (r: R) => (r.groupId === null ? 0 : (ranking.get(r.groupId) ?? 0));
  return unique.sort((a, b) => rank(a) - rank(b) || a.seq - b.seq);
}

/** The noisy groups, fewest in flight first: takeOrder's order of groups, also for a store that ranks in SQL. */
export function noisyRanking(noisy: NoisyGroups): string[] {
  return [...noisy].sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1)).map(([g]) => g);
}

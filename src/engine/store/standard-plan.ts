/**
 * Standard queues hand out older messages first, as SQS does: a message whose visibility
 * timeout ran out comes back before the messages sent after it, although those became
 * visible earlier. The ready index orders messages by the time they became visible, so a
 * receive reads a window of the first ready messages in that order and takes the oldest
 * sent (lowest position) of them. The window bounds the cost whatever the backlog; with
 * a backlog deeper than the window, a returning message waits behind newer ones that
 * became visible before it (docs: README, differences from SQS).
 */
export const READY_WINDOW_EXTRA = 50;

/** How many ready messages a receive of `max` reads to choose from. */
export function readyWindow(max: number): number {
  return max + READY_WINDOW_EXTRA;
}

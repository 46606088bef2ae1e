/** What the idle timer reads of its connection and does to it. */
interface IdleHost {
  /** Milliseconds since the peer last sent anything. */
  silentFor(): number;
  /** Milliseconds since the server last sent anything. */
  quietFor(): number;
  heartbeat(): void;
  drop(): void;
}

/**
 * AMQP 1.0's idle time-outs: an empty frame when the server has been quiet for half the
 * peer's time-out, and the socket dropped when the peer has been silent for twice the
 * server's own. Undefined when neither side asked for one.
 */
export function idleTimer(peerMs: number, ownMs: number, host: IdleHost): NodeJS.Timeout | undefined {
  if (!peerMs && !ownMs) return undefined;
  const tick = Math.max(1000, Math.min(peerMs ? peerMs / 2 : ownMs, ownMs || peerMs / 2));
  const timer = setInterval(() => {
    if (ownMs && host.silentFor() > 2 * ownMs) return host.drop();
    if (peerMs && host.quietFor() >= peerMs / 2) host.heartbeat();
  }, tick);
  timer.unref();
  return timer;
}

import { HEARTBEAT } from './frames.js';

/** What the heartbeat reads and does on its connection. */
export interface HeartbeatPeer {
  /** When a byte last came in, and when one last went out (ms). */
  lastReceived(): number;
  lastSent(): number;
  write(frames: Buffer[]): void;
  /** The peer is gone: drop the socket. */
  gone(): void;
}

/**
 * Heartbeats at the negotiated interval (0: none): one sent when nothing else went out
 * for half of it, and the peer dropped after two intervals without a byte from it, as
 * RabbitMQ counts them.
 */
export function startHeartbeat(seconds: number, peer: HeartbeatPeer): NodeJS.Timeout | undefined {
  if (!seconds) return undefined;
  const ms = seconds * 1000;
  const timer = setInterval(() => {
    const now = Date.now();
    if (now - peer.lastReceived() > 2 * ms) return peer.gone();
    if (now - peer.lastSent() >= ms / 2) peer.write([HEARTBEAT]);
  }, ms / 2);
  timer.unref();
  return timer;
}

import type { Socket } from 'node:net';
import type { AmqpUsage } from './limits.js';
import type { MethodName } from './spec.js';

/**
 * Methods waiting on this connection's channels past which it stops reading the socket
 * (TCP then slows the publisher down), and below which it reads again.
 */
const BACKLOG_PAUSE = 2000;
const BACKLOG_RESUME = 500;
/** The same for the bytes of complete messages waiting to be stored. */
const BACKLOG_PAUSE_BYTES = 16 << 20;
const BACKLOG_RESUME_BYTES = 4 << 20;

/**
 * When a connection reads its socket: not while too much waits on its channels, nor,
 * if it publishes, while the server's alarm is set (AmqpUsage.queued); a client that
 * announced the capability is told with connection.blocked / unblocked, as RabbitMQ
 * does under a resource alarm.
 */
export class Flow {
  /** The client announced the connection.blocked capability. */
  hearsBlocked = false;
  private pending = 0;
  private pendingBytes = 0;
  /** This connection has published: the server's alarm blocks it. */
  private publisher = false;
  private blocked = false;
  /** The connection used its turn of the event loop: the socket is unread until the next. */
  private yielding = false;
  private stopAlarm?: () => void;

  constructor(
    private readonly socket: Socket,
    private readonly usage: AmqpUsage,
    private readonly send0: (name: MethodName, args?: Record<string, unknown>) => void,
  ) {}

  /** The connection is open: the server's alarm applies to it from now. */
  watchAlarm(): void {
    this.stopAlarm = this.usage.onAlarm(() => this.update());
  }

  stop(): void {
    this.stopAlarm?.();
  }

  /** Methods (and bytes of complete messages) queued on the channels, or (negative) done. */
  backlog(delta: number, bytes: number): void {
    this.pending += delta;
    this.pendingBytes += bytes;
    if (bytes) {
      if (bytes > 0) this.publisher = true;
      this.usage.queued(bytes);
    }
    this.update();
  }

  /** Stops reading until the event loop's next turn, then runs `resume` (the frames still buffered). */
  yieldTurn(resume: () => void): void {
    this.yielding = true;
    this.update();
    setImmediate(() => {
      this.yielding = false;
      resume();
      this.update();
    });
  }

  private update(): void {
    const blocked = this.usage.alarm && this.publisher;
    if (blocked !== this.blocked) {
      this.blocked = blocked;
      if (this.hearsBlocked)
        this.send0(blocked ? 'connection.blocked' : 'connection.unblocked', blocked ? { reason: 'low on memory' } : {});
    }
    const paused = this.socket.isPaused();
    const busy = blocked || this.yielding;
    if (!paused && (busy || this.pending >= BACKLOG_PAUSE || this.pendingBytes >= BACKLOG_PAUSE_BYTES))
      this.socket.pause();
    else if (paused && !busy && this.pending <= BACKLOG_RESUME && this.pendingBytes <= BACKLOG_RESUME_BYTES)
      this.socket.resume();
  }
}

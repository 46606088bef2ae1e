/**
 * Time for the engine. Every rule that depends on time reads it from here, so tests
 * (and a server started with `--clock manual`) can move time forward without sleeping.
 */
export interface Timer {
  cancel(): void;
}

export interface Clock {
  now(): number;
  /** Calls `fn` once `ms` milliseconds of this clock's time have passed. */
  schedule(ms: number, fn: () => void): Timer;
}

export class SystemClock implements Clock {
  now(): number {
    return Date.now();
  }
  schedule(ms: number, fn: () => void): Timer {
    const t = setTimeout(fn, Math.max(0, ms));
    t.unref?.();
    return { cancel: () => clearTimeout(t) };
  }
}

interface Pending {
  at: number;
  fn: () => void;
  done: boolean;
}

/**
 * A clock that moves only when told to. It starts at real time, so timestamps look
 * plausible, and fires scheduled callbacks in time order as it advances.
 */
export class ManualClock implements Clock {
  private current: number;
  private pending: Pending[] = [];

  constructor(start = Date.now()) {
    this.current = start;
  }
  now(): number {
    return this.current;
  }
  schedule(ms: number, fn: () => void): Timer {
    const p: Pending = { at: this.current + Math.max(0, ms), fn, done: false };
    this.pending.push(p);
    return {
      cancel: () => {
        p.done = true;
      },
    };
  }
  advance(ms: number): void {
    const target = this.current + ms;
    for (;;) {
      this.pending = this.pending.filter((p) => !p.done);
      const next = this.pending.filter((p) => p.at <= target).sort((a, b) => a.at - b.at)[0];
      if (!next) break;
      this.current = Math.max(this.current, next.at);
      next.done = true;
      next.fn();
    }
    this.current = target;
  }
}

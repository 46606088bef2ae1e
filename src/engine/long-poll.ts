import type { Store } from './store/store.js';
import type { Clock, Timer } from './clock.js';

/**
 * What a long poll needs to know of the request it serves: whether the client went
 * away. AbortSignal has this shape; the HTTP front gives a cheaper one.
 */
export interface Cancellation {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

interface Waiter {
  /** Runs one receive attempt (never two at once). */
  poke(): void;
  running: boolean;
  /** The most messages one attempt takes. */
  max: number;
  release(): void;
}

/** The waiters of one queue, in arrival order, and the queue's single wake-up sources. */
interface QueueWaiters {
  list: Waiter[];
  unsubscribe: () => void;
  timer?: Timer;
  timerAt?: number;
}

/**
 * Long polling without polling loops. A waiting receive sleeps until the store says
 * messages may be available (a send, a visibility change, a move), or until the next
 * moment a delayed or in-flight message becomes visible.
 *
 * A wake-up rouses one idle waiter, not all of them: a single send would otherwise cost
 * as many receive transactions as there are waiters. A waiter whose attempt filled
 * its batch passes the wake-up on to the next idle one, since more may remain; a
 * partial or empty attempt ends the chain.
 */
export class LongPolls {
  private readonly queues = new Map<number, QueueWaiters>();
  private count = 0;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  get size(): number {
    return this.count;
  }

  /** Runs `attempt` until it returns something, the wait ends, or `signal` aborts. */
  async wait<T>(queueId: number, waitMs: number, attempt: () => Promise<T[]>, signal?: Cancellation, max = 1): Promise<T[]> {
    const first = await attempt();
    if (first.length > 0 || waitMs <= 0 || signal?.aborted) return first;
    const deadline = this.clock.now() + waitMs;

    return new Promise<T[]>((resolve, reject) => {
      let done = false;
      let again = false;
      const finish = (result: T[], error?: unknown) => {
        if (done) return;
        done = true;
        deadlineTimer.cancel();
        signal?.removeEventListener('abort', waiter.release);
        this.remove(queueId, waiter);
        if (error) reject(error);
        else resolve(result);
      };
      const waiter: Waiter = {
        running: false,
        max,
        release: () => finish([]),
        poke: () => {
          if (done) return;
          if (waiter.running) {
            again = true;
            return;
          }
          waiter.running = true;
          attempt().then(
            (got) => {
              waiter.running = false;
              if (got.length > 0) {
                finish(got);
                // A full batch means more may be waiting: pass the wake-up on.
                if (got.length >= max) this.wakeOne(queueId);
                return;
              }
              if (again) {
                again = false;
                waiter.poke();
              } else {
                this.armTimer(queueId, deadline).catch(() => {});
              }
            },
            (e) => {
              waiter.running = false;
              finish([], e);
            },
          );
        },
      };
      const deadlineTimer = this.clock.schedule(deadline - this.clock.now(), waiter.release);
      signal?.addEventListener('abort', waiter.release);
      this.add(queueId, waiter);
      this.armTimer(queueId, deadline).catch((e) => finish([], e));
    });
  }

  private add(queueId: number, w: Waiter): void {
    let q = this.queues.get(queueId);
    if (!q) {
      q = {
        list: [],
        unsubscribe: this.store.wakeups.subscribe(queueId, () => this.wakeOne(queueId), () => this.idleCapacity(queueId)),
      };
      this.queues.set(queueId, q);
    }
    q.list.push(w);
    this.count++;
  }

  private remove(queueId: number, w: Waiter): void {
    const q = this.queues.get(queueId);
    if (!q) return;
    const i = q.list.indexOf(w);
    if (i < 0) return;
    q.list.splice(i, 1);
    this.count--;
    if (q.list.length === 0) {
      q.unsubscribe();
      q.timer?.cancel();
      this.queues.delete(queueId);
    }
  }

  /**
   * How many messages the idle waiters of the queue take when woken now: a wake-up rouses
   * one, and one that fills its batch passes it on to the next. A busy waiter counts for
   * nothing, as its attempt may already be past the new messages.
   */
  private idleCapacity(queueId: number): number {
    let n = 0;
    for (const w of this.queues.get(queueId)?.list ?? []) if (!w.running) n += w.max;
    return n;
  }

  /** Wakes the longest-waiting idle waiter; if all are busy, one of them tries again. */
  private wakeOne(queueId: number): void {
    const q = this.queues.get(queueId);
    if (!q || q.list.length === 0) return;
    (q.list.find((w) => !w.running) ?? q.list[0]!).poke();
  }

  /**
   * One timer per queue, at the next moment a message becomes visible (if before the
   * caller's deadline): delayed messages and expiring receipts wake a waiter too.
   */
  private async armTimer(queueId: number, deadline: number): Promise<void> {
    const next = await this.store.messages.nextVisibleAt(queueId, this.clock.now());
    const q = this.queues.get(queueId);
    if (!q || next === undefined || next >= deadline) return;
    if (q.timer && q.timerAt !== undefined && q.timerAt <= next && q.timerAt > this.clock.now()) return;
    q.timer?.cancel();
    q.timerAt = next;
    q.timer = this.clock.schedule(next - this.clock.now(), () => {
      q.timer = undefined;
      q.timerAt = undefined;
      this.wakeOne(queueId);
    });
  }

  releaseAll(): void {
    for (const q of [...this.queues.values()]) for (const w of [...q.list]) w.release();
  }
}

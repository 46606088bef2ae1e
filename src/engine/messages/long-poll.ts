import type { ReceiveResult } from '../store/messages.js';
import type { Store } from '../store/store.js';
import type { Clock, Timer } from '../kernel/clock.js';

/**
 * What a long poll needs to know of the request it serves: whether the client went
 * away. AbortSignal has this shape; the HTTP front gives a cheaper one.
 */
export interface Cancellation {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void): void;
  removeEventListener(type: 'abort', listener: () => void): void;
  /** Who waits: the client's address, when the request came over HTTP (shown by waiting()). */
  readonly client?: string;
}

/** A long poll waiting now, as the console lists a queue's receivers. */
export interface WaitingReceive {
  since: number;
  deadline: number;
  client?: string;
}

/** What one receive attempt gives a long poll: its messages, and when it found none, maybe the next visible time. */
export type Attempt<T> = Pick<ReceiveResult, 'nextVisibleAt'> & { messages: T[] };

interface Waiter {
  /** Runs one receive attempt (never two at once). */
  poke(): void;
  running: boolean;
  /** The most messages one attempt takes. */
  max: number;
  /** When the wait ends, empty. */
  deadline: number;
  since: number;
  client?: string;
  release(): void;
}

/** The waiters of one queue, in arrival order, and what this node knows of the queue. */
interface QueueWaiters {
  list: Waiter[];
  /** Long polls inside wait() for this queue, waiting or still in their first attempt. */
  holders: number;
  /** Gated long polls (AMQP consumers) in their first attempt, and those waiting for a turn. */
  firsts: number;
  turns: (() => void)[];
  unsubscribe: () => void;
  timer?: Timer;
  timerAt?: number;
  /** Counts wake-ups, so an attempt can tell whether one came while it ran. */
  wakes: number;
  /** Counts wake-ups that found no waiter to rouse: a first attempt that overlapped one tries again. */
  unheard: number;
  /**
   * Messages that counted wake-ups announced (a send batch says how many it wrote) and no
   * attempt has taken yet, as far as this node knows.
   */
  supply: number;
  /** What the attempts under way take at most: the supply they may already be taking. */
  running: number;
  /** All messages counted wake-ups ever announced: an attempt tells what came during it. */
  announced: number;
  /**
   * Set by an attempt that took all the queue had ready (fewer than it asked for, the
   * store says so by giving the next visible time) with no wake-up while it ran; an
   * uncounted wake-up clears it. While it holds and the supply is covered by the attempts
   * under way, a new long poll joins the wait without a receive of its own, which would
   * find nothing. `next` is the next visible time that attempt read.
   */
  drained?: { next: number | null };
}

/** Gated first attempts (see wait) running at once on one queue. */
const FIRST_ATTEMPTS = 4;

/**
 * Long polling without polling loops. A waiting receive sleeps until the store says
 * messages may be available (a send, a visibility change, a move), or until the next
 * moment a delayed or in-flight message becomes visible.
 *
 * A wake-up rouses as few waiters as can take what it announced, not all of them: a
 * single send would otherwise cost as many receive transactions as there are waiters,
 * most finding nothing. A counted wake-up (n messages) goes first to the attempts already
 * under way, whose reads may include them, and then to idle waiters; what an attempt did
 * not take goes to the next. An attempt that fills its batch passes a wake-up on, since
 * more may remain; an uncounted wake-up rouses one idle waiter.
 *
 * A long poll listens from before its first attempt, so a wake-up that comes while that
 * attempt runs is not lost: the attempt may have read before the messages were committed.
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

  /**
   * Runs `attempt` until it returns something, the wait ends, or `signal` aborts.
   * `gated`: the first attempt waits while FIRST_ATTEMPTS gated ones run on the queue (AMQP
   * consumers, which start by the hundred): by its turn the queue is usually known to be
   * drained, and it waits without an attempt of its own.
   */
  async wait<T>(
    queueId: number,
    waitMs: number,
    attempt: () => Promise<Attempt<T>>,
    signal?: Cancellation,
    max = 1,
    gated = false,
  ): Promise<T[]> {
    if (waitMs <= 0) return (await attempt()).messages;
    const q = this.hold(queueId);
    try {
      const done = gated ? await this.firstTurn(q) : undefined;
      let first: Attempt<T> & { unheard: boolean };
      try {
        const d = q.drained;
        const skip = signal?.aborted || (d && (d.next === null || d.next > this.clock.now()) && q.supply <= q.running);
        first = skip ? { messages: [], nextVisibleAt: d?.next, unheard: false } : await this.observed(q, attempt, max);
      } finally {
        done?.();
      }
      if (first.messages.length > 0 || signal?.aborted) return first.messages;
      return await this.sleep(q, queueId, this.clock.now() + waitMs, attempt, signal, max, first);
    } finally {
      this.unhold(queueId, q);
    }
  }

  /** Runs one attempt and settles what it took against the supply (see QueueWaiters). */
  private async observed<T>(
    q: QueueWaiters,
    attempt: () => Promise<Attempt<T>>,
    max: number,
  ): Promise<Attempt<T> & { unheard: boolean }> {
    const { wakes, unheard, announced } = q;
    q.running += max;
    let got: Attempt<T>;
    try {
      got = await attempt();
    } finally {
      q.running -= max;
    }
    const took = got.messages.length;
    q.supply = Math.max(0, q.supply - took);
    // An attempt that found all there was read after every message announced before it
    // began: what it left, someone else took. Only those announced since may be unread.
    if (took === 0 || got.nextVisibleAt !== undefined) q.supply = Math.min(q.supply, q.announced - announced);
    if (took >= max) q.supply = Math.max(q.supply, 1); // full: more may be waiting
    if (got.nextVisibleAt === undefined) q.drained = undefined;
    else if (q.wakes === wakes) q.drained = { next: got.nextVisibleAt };
    return { ...got, unheard: q.unheard !== unheard };
  }

  private sleep<T>(
    q: QueueWaiters,
    queueId: number,
    deadline: number,
    attempt: () => Promise<Attempt<T>>,
    signal: Cancellation | undefined,
    max: number,
    first: Attempt<T> & { unheard: boolean },
  ): Promise<T[]> {
    return new Promise<T[]>((resolve, reject) => {
      let done = false;
      let again = false;
      /** The wait ended while an attempt ran: what that attempt claims is the result, never lost. */
      let ending = false;
      const finish = (result: T[], error?: unknown) => {
        if (done) return;
        if (waiter.running && !error && result.length === 0) {
          ending = true;
          return;
        }
        done = true;
        deadlineTimer.cancel();
        signal?.removeEventListener('abort', waiter.release);
        this.remove(q, waiter);
        if (error) reject(error);
        else resolve(result);
      };
      const waiter: Waiter = {
        running: false,
        max,
        deadline,
        since: this.clock.now(),
        client: signal?.client,
        release: () => finish([]),
        poke: () => {
          if (done) return;
          if (waiter.running) {
            again = true;
            return;
          }
          waiter.running = true;
          this.observed(q, attempt, max).then(
            ({ messages: got, nextVisibleAt }) => {
              waiter.running = false;
              if (got.length > 0 || ending) finish(got);
              else if (again) {
                again = false;
                waiter.poke();
                return;
              }
              this.dispatch(q);
              // Whoever still waits needs the timer at the next visible time, also when this
              // waiter took messages: the timer that woke it may be spent. Without the time
              // from the receive, an attempt under way will bring it; else it is asked for.
              if (nextVisibleAt !== undefined || q.running === 0) this.armTimer(queueId, nextVisibleAt).catch(() => {});
            },
            (e) => {
              waiter.running = false;
              finish([], e);
              this.dispatch(q);
            },
          );
        },
      };
      const deadlineTimer = this.clock.schedule(deadline - this.clock.now(), waiter.release);
      signal?.addEventListener('abort', waiter.release);
      q.list.push(waiter);
      this.count++;
      // A wake-up no waiter heard came during the first attempt, which may have read too early.
      if (first.unheard) waiter.poke();
      else this.dispatch(q);
      if (!waiter.running) this.armTimer(queueId, first.nextVisibleAt).catch((e) => finish([], e));
    });
  }

  /** A turn for a gated first attempt on the queue; returns how to give it back. */
  private async firstTurn(q: QueueWaiters): Promise<() => void> {
    while (q.firsts >= FIRST_ATTEMPTS) await new Promise<void>((resolve) => q.turns.push(resolve));
    q.firsts++;
    return () => {
      q.firsts--;
      q.turns.shift()?.();
    };
  }

  private hold(queueId: number): QueueWaiters {
    let q = this.queues.get(queueId);
    if (!q) {
      q = {
        list: [],
        holders: 0,
        firsts: 0,
        turns: [],
        wakes: 0,
        unheard: 0,
        supply: 0,
        running: 0,
        announced: 0,
        unsubscribe: this.store.wakeups.subscribe(
          queueId,
          (n) => this.woken(queueId, n),
          () => this.idleCapacity(queueId),
        ),
      };
      this.queues.set(queueId, q);
    }
    q.holders++;
    return q;
  }

  private unhold(queueId: number, q: QueueWaiters): void {
    if (--q.holders > 0) return;
    q.unsubscribe();
    q.timer?.cancel();
    this.queues.delete(queueId);
  }

  private remove(q: QueueWaiters, w: Waiter): void {
    const i = q.list.indexOf(w);
    if (i < 0) return;
    q.list.splice(i, 1);
    this.count--;
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

  /** A wake-up from the store: `n` messages made available, or an unknown change. */
  private woken(queueId: number, n?: number): void {
    const q = this.queues.get(queueId);
    if (!q) return;
    q.wakes++;
    if (q.list.length === 0) q.unheard++;
    if (n !== undefined) {
      q.supply += n;
      q.announced += n;
      this.dispatch(q);
      return;
    }
    q.drained = undefined;
    // Unknown: rouse one idle waiter; if all are busy, one of them tries again.
    const w = q.list.find((x) => !x.running) ?? q.list[0];
    w?.poke();
  }

  /** Rouses idle waiters, oldest first, until the attempts under way cover the supply. */
  private dispatch(q: QueueWaiters): void {
    for (const w of q.list) {
      if (q.supply <= q.running) return;
      if (!w.running) w.poke();
    }
  }

  /**
   * One timer per queue, at the next moment a message becomes visible (if before the
   * last idle waiter's deadline): delayed messages and expiring receipts wake a waiter
   * too. `known` is the time the attempt read with its receive, if it did.
   */
  private async armTimer(queueId: number, known?: number | null): Promise<void> {
    if (!this.queues.get(queueId)?.list.some((w) => !w.running)) return;
    const next =
      known === undefined ? await this.store.messages.nextVisibleAt(queueId, this.clock.now()) : (known ?? undefined);
    const q = this.queues.get(queueId);
    const deadline = Math.max(...(q?.list.filter((w) => !w.running).map((w) => w.deadline) ?? []));
    if (!q || next === undefined || next >= deadline) return;
    if (next <= this.clock.now()) {
      // Already visible (the clock moved on since the read): wake now, not at a timer.
      queueMicrotask(() => this.woken(queueId));
      return;
    }
    if (q.timer && q.timerAt !== undefined && q.timerAt <= next && q.timerAt > this.clock.now()) return;
    q.timer?.cancel();
    q.timerAt = next;
    q.timer = this.clock.schedule(next - this.clock.now(), () => {
      q.timer = undefined;
      q.timerAt = undefined;
      this.woken(queueId);
    });
  }

  /** The long polls sleeping on the queue now (not those in their first attempt), oldest first. */
  waiting(queueId: number): WaitingReceive[] {
    return (this.queues.get(queueId)?.list ?? []).map((w) => ({
      since: w.since,
      deadline: w.deadline,
      client: w.client,
    }));
  }

  releaseAll(): void {
    for (const q of [...this.queues.values()]) for (const w of [...q.list]) w.release();
  }
}

import type { Store } from '../stores/store.js';
import type { Clock, Timer } from './clock.js';

/**
 * Long polling without polling loops: a waiting receive sleeps until the store says
 * messages may be available (a send, a visibility change, a move) or until the next
 * moment a delayed or in-flight message becomes visible, whichever is first.
 */
export class LongPolls {
  private readonly waiting = new Set<() => void>();

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  get size(): number {
    return this.waiting.size;
  }

  /**
   * Runs `attempt` until it returns something, the wait ends, or `signal` aborts.
   * Attempts never overlap, and a wake-up during an attempt triggers one more.
   */
  async wait<T>(queueId: number, waitMs: number, attempt: () => Promise<T[]>, signal?: AbortSignal): Promise<T[]> {
    const first = await attempt();
    if (first.length > 0 || waitMs <= 0 || signal?.aborted) return first;
    const deadline = this.clock.now() + waitMs;

    return new Promise<T[]>((resolve, reject) => {
      let done = false;
      let running = false;
      let again = false;
      let visibilityTimer: Timer | undefined;
      const finish = (result: T[], error?: unknown) => {
        if (done) return;
        done = true;
        unsubscribe();
        deadlineTimer.cancel();
        visibilityTimer?.cancel();
        signal?.removeEventListener('abort', release);
        this.waiting.delete(release);
        if (error) reject(error);
        else resolve(result);
      };
      const release = () => finish([]);
      const tryAgain = async (): Promise<void> => {
        if (done) return;
        if (running) {
          again = true;
          return;
        }
        running = true;
        try {
          const got = await attempt();
          if (got.length > 0) return finish(got);
          await armVisibilityTimer();
        } catch (e) {
          return finish([], e);
        } finally {
          running = false;
        }
        if (again) {
          again = false;
          void tryAgain();
        }
      };
      const armVisibilityTimer = async () => {
        visibilityTimer?.cancel();
        const now = this.clock.now();
        const next = await this.store.nextVisibleAt(queueId, now);
        if (!done && next !== undefined && next < deadline) {
          visibilityTimer = this.clock.schedule(next - this.clock.now(), () => void tryAgain());
        }
      };
      const unsubscribe = this.store.onAvailable(queueId, () => void tryAgain());
      const deadlineTimer = this.clock.schedule(deadline - this.clock.now(), release);
      signal?.addEventListener('abort', release);
      this.waiting.add(release);
      armVisibilityTimer().catch((e) => finish([], e));
    });
  }

  releaseAll(): void {
    for (const release of [...this.waiting]) release();
  }
}

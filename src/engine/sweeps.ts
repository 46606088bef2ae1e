import { randomUUID } from 'node:crypto';
import { sampleDepths } from './activity/activity-sampler.js';
import type { Timer } from './kernel/clock.js';
import type { EngineContext } from './context/engine-context.js';
import { expireDue } from './dead-letters/road.js';
import { retentionMs, SETTABLE } from './queues/queue-attributes.js';

/** A sweeping node that stops renewing is replaced by another after this long. */
const SWEEP_LEASE_MS = 5_000;
/** Messages expired per transaction, so a large expiry never stalls requests. */
const EXPIRY_BATCH = 100;
/** Queues with expired messages visited per expiry tick; the rest wait for the next. */
const EXPIRY_QUEUES = 1000;
/** Queues whose retention is due, asked of the store at once. */
const RETENTION_BATCH = 1000;
/**
 * The longest the retention sweep sleeps. A send is due no sooner than its queue's
 * retention (at least 60 s), so only messages dead-lettered with an old enqueue time,
 * or a shortened retention, can wait for it.
 */
const RETENTION_MAX_WAIT_MS = 60_000;
const RETENTION_RULE = {
  attribute: 'MessageRetentionPeriod',
  defaultSeconds: Number(SETTABLE.MessageRetentionPeriod!.default),
};

/**
 * The engine's background work on the clock, each driven by what is due rather than by
 * visiting every queue: the expiry sweep, once a second, which asks the store which
 * queues have a message past its time-to-live (one index probe when none has), then
 * samples queue depths; and the retention sweep, which runs when the store says the next
 * message passes its retention, and at least every RETENTION_MAX_WAIT_MS for what arrived
 * meanwhile with an old enqueue time (a dead-lettered standard message keeps its own).
 * Receives and peeks never return a message past retention, so the retention sweep only
 * reclaims space, and a late one is not seen by any client. Every node flushes its own
 * activity counts each second; with a shared store only the holder of the sweep lease
 * sweeps, and it renews the lease every tick.
 */
export class Sweeps {
  private expiryTimer?: Timer;
  private retentionTimer?: Timer;
  /** Messages deleted by retention since start. */
  private retentionSwept = 0;

  constructor(private readonly engine: EngineContext) {}

  start(): void {
    const { clock, log, store } = this.engine;
    const owner = randomUUID();
    let held = false;
    const expiryTick = () => {
      this.engine.activity
        .flush()
        .catch((err) => log.error({ err }, 'activity counts not saved; kept for the next second'));
      store.maintenance
        .tryLease('retention-sweep', owner, clock.now(), SWEEP_LEASE_MS)
        .then(async (h) => {
          held = h;
          if (h) {
            await this.expiry();
            await sampleDepths(this.engine);
          }
        })
        .catch((err) => log.error({ err }, 'expiry sweep failed'))
        .finally(() => {
          if (this.expiryTimer) this.expiryTimer = clock.schedule(1000, expiryTick);
        });
    };
    const retentionTick = () => {
      (held ? this.retentionPass() : Promise.resolve(clock.now() + RETENTION_MAX_WAIT_MS))
        .catch((err) => {
          log.error({ err }, 'retention sweep failed');
          return clock.now() + 1000;
        })
        .then((next) => {
          const wait = Math.min(Math.max(next - clock.now(), 0), RETENTION_MAX_WAIT_MS);
          if (this.retentionTimer) this.retentionTimer = clock.schedule(wait, retentionTick);
        });
    };
    this.expiryTimer = clock.schedule(1000, expiryTick);
    this.retentionTimer = clock.schedule(1000, retentionTick);
  }

  stop(): void {
    this.expiryTimer?.cancel();
    this.expiryTimer = undefined;
    this.retentionTimer?.cancel();
    this.retentionTimer = undefined;
  }

  /**
   * Dead-letters messages whose time-to-live has passed (reason `expired`), in batches
   * of one transaction each; without a dead-letter queue they are deleted, as RabbitMQ
   * drops them. Only the queues the store says hold one are visited. Returns how many.
   */
  async expiry(): Promise<number> {
    const { store, clock } = this.engine;
    let total = 0;
    for (const id of await store.maintenance.expiryDue(clock.now(), EXPIRY_QUEUES)) {
      const q = await store.queues.byId(id);
      if (!q) continue;
      for (;;) {
        const outcomes = await expireDue(this.engine, q, EXPIRY_BATCH);
        total += outcomes.length;
        if (outcomes.length < EXPIRY_BATCH) break;
      }
    }
    return total;
  }

  /** Deletes every message past its queue's retention now; returns how many (tests and tools). */
  async retention(): Promise<number> {
    const before = this.retentionSwept;
    await this.retentionPass();
    return this.retentionSwept - before;
  }

  /**
   * Deletes the messages past their queue's MessageRetentionPeriod in every queue where
   * one is due, and forgets old FIFO deduplication ids. Returns when the next message
   * passes its retention (or now + RETENTION_MAX_WAIT_MS if no queue holds one).
   */
  private async retentionPass(): Promise<number> {
    const { store, clock } = this.engine;
    for (;;) {
      const now = clock.now();
      const due = await store.maintenance.retentionDue(RETENTION_RULE, RETENTION_BATCH);
      let deleted = 0;
      for (const d of due) {
        // A message sent at t is past retention once now > t + retention (see receives).
        if (d.dueAt >= now) {
          await store.maintenance.forgetDeduplication(now);
          return d.dueAt + 1;
        }
        const q = await store.queues.byId(d.queueId);
        if (q) deleted += await store.maintenance.deleteSentBefore(q.id, now - retentionMs(q));
      }
      this.retentionSwept += deleted;
      if (due.length < RETENTION_BATCH || deleted === 0) {
        await store.maintenance.forgetDeduplication(now);
        return now + RETENTION_MAX_WAIT_MS;
      }
    }
  }
}

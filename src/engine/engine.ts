import { randomBytes, randomUUID } from 'node:crypto';
import { accessDenied, policyAllows } from './queues/access-policy.js';
import { parseQueueUrl, queueArn, queueUrl } from './queues/addressing.js';
import type { Clock } from './clock.js';
import type { EngineContext, Log } from './context.js';
import { effectiveSettings, type DeadLetterSettings } from './dead-letters/dead-letter-settings.js';
import { deadLetterTarget } from './dead-letters/dead-lettering.js';
import { errors } from './errors.js';
import { FairQueues } from './messages/fair-queues.js';
import { LongPolls } from './messages/long-poll.js';
import { sampleDepths } from './activity/activity-sampler.js';
import { MoveTaskRunner } from './move-tasks/move-task-runner.js';
import { ActivityCounter } from './activity/activity-counts.js';
import { bothObservers, noObserver, type EngineObserver } from './observer.js';
import { ServerPolicySet, type ServerPolicy } from './dead-letters/server-policies.js';
import { decodeReceipt, encodeReceipt, type Receipt } from './messages/receipt.js';
import { exchangeDeadLetterTarget } from './amqp/dead-letter-exchange.js';
import type { AmqpPropertyCodec } from './amqp/message-view.js';
import { DeliveryHolders } from './amqp/delivery-holders.js';
import type { DeadLettered, DeadLetterTarget } from './store/dead-letters.js';
import type { Store } from './store/store.js';
import { retentionMs, SETTABLE } from './queues/queue-attributes.js';
import type { DeathReason, QueueRecord, RequestContext } from './types.js';

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
const RETENTION_RULE = { attribute: 'MessageRetentionPeriod', defaultSeconds: Number(SETTABLE.MessageRetentionPeriod!.default) };

export interface EngineOptions {
  store: Store;
  clock: Clock;
  /** The default region: of AMQP's queues, the config file's, and requests that name none. */
  region: string;
  /** Approximate in-flight limit of a standard queue (SQS: about 120,000). */
  inflightLimit?: number;
  /** Fair queues (docs/fair-queues.md); false serves every standard queue oldest first, as before (bench/fair-queues.ts compares). */
  fairQueues?: boolean;
  /** Long polls allowed to wait at once; past it a receive that would wait gets a 503 (see message-actions.ts). */
  maxLongPolls?: number;
  /** Dead-letter policies in force at start (see policies.ts). */
  policies?: ServerPolicy[];
  log?: Log;
  /** Told what happens, after each commit (metrics), besides the engine's own activity counts. */
  observer?: EngineObserver;
  /** Reads and writes AMQP content properties as JSON (PeekMessages, imports); without it they are shown raw and cannot be imported. */
  amqpCodec?: AmqpPropertyCodec;
}

/**
 * The engine: every rule of queue behaviour, and nothing of HTTP or SQL. Actions are
 * in queue-actions.ts and message-actions.ts; they take and return the shapes of the
 * SQS API, so each protocol adapter only translates the wire format.
 */
export class Engine implements EngineContext {
  readonly store: Store;
  readonly clock: Clock;
  readonly region: string;
  readonly inflightLimit: number;
  readonly maxLongPolls: number;
  readonly longPolls: LongPolls;
  /** Fair queues: each multi-tenant standard queue's noisy groups (fair-queues.ts). */
  readonly fair: FairQueues;
  readonly moveTasks: MoveTaskRunner;
  /** Upper bounds of each standard queue's in-flight count (see message-actions.ts). */
  readonly inflightEstimates = new Map<number, number>();
  readonly log: Log;
  /** Hears every event: the caller's observer (metrics) and the activity counts, so both count alike. */
  readonly observer: EngineObserver;
  /** GetQueueActivity's counts, kept in memory between flushes (activity-counts.ts). */
  readonly activity: ActivityCounter;
  readonly policies: ServerPolicySet;
  readonly amqpCodec?: AmqpPropertyCodec;
  /** Which process holds each AMQP delivery, to return a stopped one's at once (amqp/delivery-holders.ts). */
  readonly deliveryHolders: DeliveryHolders;
  /** Messages parked in the cycles queue since start (see dead-lettering.ts). */
  cyclesBroken = 0;
  /** Messages dropped since start because they had no dead-letter queue to go to. */
  dropped = 0;
  private readonly settingsCache = new WeakMap<Omit<QueueRecord, 'id'>, { generation: number; settings: DeadLetterSettings }>();
  private sweepTimer?: { cancel(): void };
  private retentionTimer?: { cancel(): void };
  /** Messages deleted by retention since start. */
  private retentionSwept = 0;
  private receiptCodec?: Promise<ReceiptCodec>;

  constructor(opts: EngineOptions) {
    this.store = opts.store;
    this.clock = opts.clock;
    this.region = opts.region;
    this.inflightLimit = opts.inflightLimit ?? 120_000;
    this.maxLongPolls = opts.maxLongPolls ?? 10_000;
    this.longPolls = new LongPolls(this.store, this.clock);
    this.fair = new FairQueues(this.store, this.clock, opts.fairQueues ?? true);
    this.log = opts.log ?? { info() {}, warn() {}, error() {} };
    this.activity = new ActivityCounter(this.store.activity, this.clock);
    this.observer = bothObservers(opts.observer ?? noObserver, this.activity);
    this.moveTasks = new MoveTaskRunner(this);
    this.policies = new ServerPolicySet(opts.policies);
    this.amqpCodec = opts.amqpCodec;
    this.deliveryHolders = new DeliveryHolders(this.store, this.clock, this.log);
  }

  /**
   * The queue's dead-letter settings in force: its attributes over the matching policy.
   * Every send and receive asks, so they are kept per queue record (a changed queue is a
   * new record) until the policies change.
   */
  settingsOf(queue: Omit<QueueRecord, 'id'>): DeadLetterSettings {
    const hit = this.settingsCache.get(queue);
    if (hit && hit.generation === this.policies.generation) return hit.settings;
    const settings = effectiveSettings(this.policies, queue.region, queue);
    this.settingsCache.set(queue, { generation: this.policies.generation, settings });
    return settings;
  }

  /**
   * Logs and counts what an operation on `queue` dead-lettered, once it has committed
   * (stores may run a transaction again, so nothing is logged from inside one): a
   * broken cycle, parked in the cycles queue, or a message dropped with nowhere to go.
   * The observer hears of every move; a move into a dead-letter queue is not a send there,
   * it is a dead-letter arrival.
   */
  deadLettered(queue: QueueRecord, moves: DeadLettered[]): void {
    let drops: Map<string, string[]> | undefined;
    for (const d of moves) {
      if (d.parked || d.cycle) this.observer.cycleBroken(queue, d.reason, d.parked ? d.to : undefined);
      else if (d.to === undefined) this.observer.dropped(queue, d.reason);
      else this.observer.deadLettered(queue, d.to, d.reason);
      if (d.parked) {
        this.cyclesBroken++;
        this.log.warn(
          { queue: queue.name, messageId: d.messageId, reason: d.reason, cyclesBroken: this.cyclesBroken },
          'dead-letter cycle without a rejection: message parked in the cycles queue',
        );
      } else if (d.cycle) {
        this.cyclesBroken++;
        this.log.warn(
          { queue: queue.name, messageId: d.messageId, reason: d.reason, cyclesBroken: this.cyclesBroken },
          'dead-letter cycle without a rejection: copy dropped, as RabbitMQ does (dead-letter exchange)',
        );
      } else if (d.to === undefined) {
        this.dropped++;
        drops ??= new Map();
        const ids = drops.get(d.reason) ?? [];
        ids.push(d.messageId);
        drops.set(d.reason, ids);
      }
    }
    // Dropping is the configured behaviour (a TTL or a length limit without a DLQ), so one
    // info line per operation and reason, not a warning per message.
    for (const [reason, ids] of drops ?? []) {
      this.log.info(
        { queue: queue.name, account: queue.accountId, reason, count: ids.length, messageIds: ids.slice(0, 10), dropped: this.dropped },
        'messages dropped: the queue has no dead-letter queue',
      );
    }
  }

  async resolveQueue(ctx: RequestContext, url: unknown): Promise<QueueRecord> {
    const addr = parseQueueUrl(url, ctx);
    const queue = await this.store.queues.get(addr);
    if (!queue) throw errors.queueDoesNotExist();
    this.checkAccess(ctx, queue);
    return queue;
  }

  /** A caller from another account needs the queue's policy to allow the action. */
  checkAccess(ctx: RequestContext, queue: QueueRecord): void {
    if (queue.accountId === ctx.accountId) return;
    if (!ctx.action || !policyAllows(queue, this.arnOf(queue), ctx.accountId, ctx.action)) {
      throw accessDenied(this.urlOf(ctx, queue));
    }
  }

  /**
   * Seals and opens receipt handles under the key every node on the store shares. A
   * handle opens only if it is genuine and was given for the queue it is used with.
   */
  receipts(): Promise<ReceiptCodec> {
    this.receiptCodec ??= this.store.maintenance.secret('receipt-handle-key', randomBytes(32).toString('base64')).then((v) => {
      const key = Buffer.from(v, 'base64');
      return {
        seal: (r) => encodeReceipt(r, key),
        open: (queue, handle) => {
          const r = decodeReceipt(handle, key);
          if (r.queueId !== queue.id) throw errors.receiptHandleIsInvalid(String(handle));
          return r;
        },
      };
    });
    return this.receiptCodec;
  }

  exchangeDeadLetterTarget(queue: QueueRecord, reason: DeathReason): Promise<DeadLetterTarget> {
    return exchangeDeadLetterTarget(this, queue, reason);
  }

  arnOf(queue: Pick<QueueRecord, 'accountId' | 'region' | 'name'>): string {
    return queueArn(queue.region, queue.accountId, queue.name);
  }

  urlOf(ctx: RequestContext, queue: Pick<QueueRecord, 'accountId' | 'region' | 'name'>): string {
    return queueUrl(ctx, queue, this.region);
  }

  /**
   * Starts background work, each driven by what is due rather than by visiting every
   * queue: move tasks; the expiry sweep, once a second, which asks the store which queues
   * have a message past its time-to-live (one index probe when none has); and the
   * retention sweep, which runs when the store says the next message passes its
   * retention, and at least every RETENTION_MAX_WAIT_MS for what arrived meanwhile with
   * an old enqueue time (a dead-lettered standard message keeps its own). Receives and
   * peeks never return a message past retention, so the retention sweep only reclaims
   * space, and a late one is not seen by any client.
   */
  start(): void {
    this.moveTasks.start();
    // With a shared store only the holder of the lease sweeps; it renews it every tick.
    const owner = randomUUID();
    let held = false;
    const expiryTick = () => {
      // Every node adds its own activity counts; only the lease holder sweeps.
      this.activity.flush().catch((err) => this.log.error({ err }, 'activity counts not saved; kept for the next second'));
      this.store.maintenance.tryLease('retention-sweep', owner, this.clock.now(), SWEEP_LEASE_MS)
        .then(async (h) => { held = h; if (h) { await this.sweepExpiry(); await sampleDepths(this); } })
        .catch((err) => this.log.error({ err }, 'expiry sweep failed'))
        .finally(() => { if (this.sweepTimer) this.sweepTimer = this.clock.schedule(1000, expiryTick); });
    };
    const retentionTick = () => {
      (held ? this.retentionPass() : Promise.resolve(this.clock.now() + RETENTION_MAX_WAIT_MS))
        .catch((err) => {
          this.log.error({ err }, 'retention sweep failed');
          return this.clock.now() + 1000;
        })
        .then((next) => {
          const wait = Math.min(Math.max(next - this.clock.now(), 0), RETENTION_MAX_WAIT_MS);
          if (this.retentionTimer) this.retentionTimer = this.clock.schedule(wait, retentionTick);
        });
    };
    this.sweepTimer = this.clock.schedule(1000, expiryTick);
    this.retentionTimer = this.clock.schedule(1000, retentionTick);
  }

  /**
   * Deletes the messages past their queue's MessageRetentionPeriod in every queue where
   * one is due, and forgets old FIFO deduplication ids. Returns when the next message
   * passes its retention (or now + RETENTION_MAX_WAIT_MS if no queue holds one).
   */
  private async retentionPass(): Promise<number> {
    for (;;) {
      const now = this.clock.now();
      const due = await this.store.maintenance.retentionDue(RETENTION_RULE, RETENTION_BATCH);
      let deleted = 0;
      for (const d of due) {
        // A message sent at t is past retention once now > t + retention (see receives).
        if (d.dueAt >= now) {
          await this.store.maintenance.forgetDeduplication(now);
          return d.dueAt + 1;
        }
        const q = await this.store.queues.byId(d.queueId);
        if (q) deleted += await this.store.maintenance.deleteSentBefore(q.id, now - retentionMs(q));
      }
      this.retentionSwept += deleted;
      if (due.length < RETENTION_BATCH || deleted === 0) {
        await this.store.maintenance.forgetDeduplication(now);
        return now + RETENTION_MAX_WAIT_MS;
      }
    }
  }

  /** Deletes every message past its queue's retention now; returns how many (tests and tools). */
  async sweepRetention(): Promise<number> {
    const before = this.retentionSwept;
    await this.retentionPass();
    return this.retentionSwept - before;
  }

  /**
   * Dead-letters messages whose time-to-live has passed (reason `expired`), in batches
   * of one transaction each; without a dead-letter queue they are deleted, as RabbitMQ
   * drops them. Only the queues the store says hold one are visited. Returns how many.
   */
  async sweepExpiry(): Promise<number> {
    let total = 0;
    for (const id of await this.store.maintenance.expiryDue(this.clock.now(), EXPIRY_QUEUES)) {
      const q = await this.store.queues.byId(id);
      if (!q) continue;
      const target = await deadLetterTarget(this, q, 'expired');
      for (;;) {
        const moves = await this.store.deadLetters.expire(q.id, this.clock.now(), EXPIRY_BATCH, target);
        this.deadLettered(q, moves);
        total += moves.length;
        if (moves.length < EXPIRY_BATCH) break;
      }
    }
    return total;
  }

  /** Stops background work and answers every waiting long poll with no messages. */
  async close(): Promise<void> {
    this.sweepTimer?.cancel();
    this.sweepTimer = undefined;
    this.retentionTimer?.cancel();
    this.retentionTimer = undefined;
    this.deliveryHolders.stop();
    await this.moveTasks.stop();
    this.longPolls.releaseAll();
    await this.activity.flush().catch((err) => this.log.error({ err }, 'activity counts not saved at shutdown'));
  }
}

export interface ReceiptCodec {
  seal(r: Receipt): string;
  open(queue: Pick<QueueRecord, 'id'>, handle: unknown): Receipt;
}

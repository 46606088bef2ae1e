import { randomBytes } from 'node:crypto';
import { queueArn } from './kernel/addressing.js';
import type { Clock } from './kernel/clock.js';
import type { Log } from './context/engine-context.js';
import { SettingsInForce, type DeadLetterSettings } from './policies/dead-letter-settings.js';
import { DeadLetterReport } from './dead-letters/report.js';
import { errors, type SqsError } from './kernel/errors.js';
import { DEFAULT_ACCOUNT_QUOTAS, overQueueQuota, queueCounter, type AccountQuotas } from './queues/quotas.js';
import type { AccountCounter } from './kernel/account-counter.js';
import type { NewQueue } from './store/queues.js';
import { FairQueues } from './messages/fair-queues.js';
import { LongPolls } from './messages/long-poll.js';
import { MoveTaskRunner } from './move-tasks/move-task-runner.js';
import { ActivityCounter } from './activity/activity-counts.js';
import { bothObservers, noObserver, type EngineObserver } from './context/observer.js';
import { ServerPolicySet, type ServerPolicy } from './policies/server-policies.js';
import { decodeReceipt, encodeReceipt, type ReceiptCodec } from './messages/receipt.js';
import type { AmqpPropertyCodec } from './amqp/message-view.js';
import { DeliveryHolders } from './amqp/delivery-holders.js';
import { bindingCounter, DEFAULT_BINDING_LIMITS, type BindingLimits } from './amqp/binding-quota.js';
import type { DeadLettered } from './store/dead-letters.js';
import type { Store } from './store/store.js';
import { Sweeps } from './sweeps.js';
import type { QueueRecord } from './kernel/types.js';
import type { ActionEngine } from './actions/action-engine.js';
import { turn } from './messages/bounded-scan.js';

export interface EngineOptions {
  store: Store;
  clock: Clock;
  /** The default region: of AMQP's queues, the config file's, and requests that name none. */
  region: string;
  /** Approximate in-flight limit of a standard queue (SQS: about 120,000). */
  inflightLimit?: number;
  /** Fair queues (docs/fair-queues.md); false serves every standard queue oldest first (bench/fair-queues.ts compares). */
  fairQueues?: boolean;
  /** Long polls allowed to wait at once; past it a receive that would wait gets a 503 (see message-actions.ts). */
  maxLongPolls?: number;
  /** Dead-letter policies in force at start (see policies.ts). */
  policies?: ServerPolicy[];
  /** What one account may hold at once (quotas.ts); defaults for those not given. */
  quotas?: Partial<AccountQuotas>;
  log?: Log;
  /** Told what happens, after each commit (metrics), besides the engine's own activity counts. */
  observer?: EngineObserver;
  /** Reads and writes AMQP content properties as JSON (PeekMessages, imports); without it they are shown raw and cannot be imported. */
  amqpCodec?: AmqpPropertyCodec;
  /** AMQP bindings per account and per exchange (binding-quota.ts). */
  bindingLimits?: Partial<BindingLimits>;
}

/**
 * The engine: every rule of queue behaviour, and nothing of HTTP or SQL. Actions are
 * in actions/, one file per family (registry.ts lists them); they take and return the shapes of the
 * SQS API, so each protocol adapter only translates the wire format.
 */
export class Engine implements ActionEngine {
  readonly store: Store;
  readonly clock: Clock;
  readonly region: string;
  readonly inflightLimit: number;
  readonly maxLongPolls: number;
  readonly longPolls: LongPolls;
  /** What one account may hold at once; `longPolls` always set (half the pool by default). */
  readonly quotas: Required<AccountQuotas>;
  /** Each account's queues, held to `quotas.queues` (queues/quotas.ts). */
  readonly queueQuota: AccountCounter;
  /** Long polls waiting per caller's account (message-actions.ts), none kept at 0. */
  readonly longPollsByAccount = new Map<string, number>();
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
  /** What dead-lettering did since start: broken cycles and drops, counted and logged (dead-letters/report.ts). */
  readonly deadLetterReport: DeadLetterReport;
  /** The expiry and retention sweeps (sweeps.ts). */
  readonly sweeps: Sweeps;
  /** AMQP bindings per account (binding-quota.ts), and the limits per account and per exchange. */
  readonly bindingQuota: AccountCounter;
  readonly bindingLimits: BindingLimits;
  private readonly settings: SettingsInForce;
  private receiptCodec?: Promise<ReceiptCodec>;

  constructor(opts: EngineOptions) {
    this.store = opts.store;
    this.clock = opts.clock;
    this.region = opts.region;
    this.inflightLimit = opts.inflightLimit ?? 120_000;
    this.maxLongPolls = opts.maxLongPolls ?? 10_000;
    this.longPolls = new LongPolls(this.store, this.clock);
    const quotas = { ...DEFAULT_ACCOUNT_QUOTAS, ...opts.quotas };
    this.quotas = { ...quotas, longPolls: quotas.longPolls ?? Math.max(1, Math.floor(this.maxLongPolls / 2)) };
    this.queueQuota = queueCounter(this.store.queues, this.clock, this.quotas.queues);
    this.fair = new FairQueues(this.store, this.clock, opts.fairQueues ?? true);
    this.log = opts.log ?? { info() {}, warn() {}, error() {} };
    this.activity = new ActivityCounter(this.store.activity, this.clock);
    this.observer = bothObservers(opts.observer ?? noObserver, this.activity);
    this.moveTasks = new MoveTaskRunner(this);
    this.policies = new ServerPolicySet(opts.policies);
    this.amqpCodec = opts.amqpCodec;
    this.deliveryHolders = new DeliveryHolders(this.store, this.clock, this.log);
    this.settings = new SettingsInForce(this.policies);
    this.deadLetterReport = new DeadLetterReport(this.observer, this.log);
    this.sweeps = new Sweeps(this);
    this.bindingLimits = { ...DEFAULT_BINDING_LIMITS, ...opts.bindingLimits };
    this.bindingQuota = bindingCounter(this.store.exchanges, this.bindingLimits, this.clock);
  }

  /** The queue's dead-letter settings in force: its attributes over the matching policy. */
  settingsOf(queue: Omit<QueueRecord, 'id'>): DeadLetterSettings {
    return this.settings.of(queue);
  }

  /**
   * Creates the queue unless it exists, within its account's queue quota: over it, SQS's
   * `OverLimit`, or what `refusal` makes of it (AMQP's 406).
   */
  async createWithinQuota(
    queue: NewQueue,
    refusal: (e: SqsError) => Error = (e) => e,
  ): Promise<{ queue: QueueRecord; created: boolean }> {
    const reserved = await this.queueQuota.take(queue.accountId);
    // At the quota, CreateQueue of a queue that exists still returns it, as SQS does.
    if (!reserved && (await this.store.queues.get(queue)) === undefined)
      throw refusal(overQueueQuota(queue.name, this.queueQuota.max));
    try {
      const made = await this.store.queues.create(queue);
      if (reserved && !made.created) this.queueQuota.give(queue.accountId);
      return made;
    } catch (e) {
      if (reserved) this.queueQuota.give(queue.accountId);
      throw e;
    }
  }

  /** Reports what an operation on `queue` dead-lettered, once it has committed (dead-letters/report.ts). */
  deadLettered(queue: QueueRecord, outcomes: DeadLettered[]): void {
    this.deadLetterReport.record(queue, outcomes);
  }

  /**
   * Seals and opens receipt handles under the key every node on the store shares. A
   * handle opens only if it is genuine and was given for the queue it is used with.
   */
  receipts(): Promise<ReceiptCodec> {
    this.receiptCodec ??= this.store.maintenance
      .secret('receipt-handle-key', randomBytes(32).toString('base64'))
      .then((v) => {
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

  private readonly deletedQueueListeners = new Set<(queueId: number) => void>();

  /** Calls `listener` with each deleted queue's id (SQS DeleteQueue, AMQP queue.delete); returns how to stop. */
  onQueueDeleted(listener: (queueId: number) => void): () => void {
    this.deletedQueueListeners.add(listener);
    return () => this.deletedQueueListeners.delete(listener);
  }

  /** A queue was deleted: whoever holds on to it on this node (AMQP consumers) lets go. */
  queueDeleted(queueId: number): void {
    for (const l of this.deletedQueueListeners) l(queueId);
  }

  arnOf(queue: Pick<QueueRecord, 'accountId' | 'region' | 'name'>): string {
    return queueArn(queue.region, queue.accountId, queue.name);
  }

  /** Starts background work: move tasks and the sweeps (sweeps.ts). */
  start(): void {
    this.moveTasks.start();
    this.sweeps.start();
  }

  /**
   * Reads every queue and the settings in force of each, off the request path, so that the
   * first overview, dead-letter source look-up or scrape after start does not pay for it
   * (about 0.2 s per 10,000 queues). The store keeps the records and this engine their
   * settings, both per queue, so later changes cost only the queues changed.
   */
  async warmQueues(): Promise<void> {
    const queues = await this.store.queues.all();
    for (let i = 0; i < queues.length; i++) {
      this.settingsOf(queues[i]!);
      if (i % 1_000 === 999) await turn();
    }
  }

  /** Stops background work and answers every waiting long poll with no messages. */
  async close(): Promise<void> {
    this.sweeps.stop();
    this.deliveryHolders.stop();
    await this.moveTasks.stop();
    this.longPolls.releaseAll();
    await this.activity.flush().catch((err) => this.log.error({ err }, 'activity counts not saved at shutdown'));
  }
}

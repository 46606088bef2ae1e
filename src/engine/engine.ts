import type { Store } from '../stores/store.js';
import { parseQueueUrl, queueArn, queueUrl } from './addressing.js';
import type { Clock } from './clock.js';
import { errors } from './errors.js';
import { LongPolls } from './long-poll.js';
import { MoveTaskRunner } from './move-task-runner.js';
import type { QueueRecord, RequestContext } from './types.js';

export interface EngineOptions {
  store: Store;
  clock: Clock;
  region: string;
  /** Approximate in-flight limit of a standard queue (SQS: about 120,000). */
  inflightLimit?: number;
  log?: { info(obj: object, msg?: string): void; warn(obj: object, msg?: string): void; error(obj: object, msg?: string): void };
}

/**
 * The engine: every rule of queue behaviour, and nothing of HTTP or SQL. Actions are
 * in queue-actions.ts and message-actions.ts; they take and return the shapes of the
 * SQS API, so each protocol adapter only translates the wire format.
 */
export class Engine {
  readonly store: Store;
  readonly clock: Clock;
  readonly region: string;
  readonly inflightLimit: number;
  readonly longPolls: LongPolls;
  readonly moveTasks: MoveTaskRunner;
  /** Upper bounds of each standard queue's in-flight count (see message-actions.ts). */
  readonly inflightEstimates = new Map<number, number>();
  readonly log: NonNullable<EngineOptions['log']>;
  private sweepTimer?: { cancel(): void };

  constructor(opts: EngineOptions) {
    this.store = opts.store;
    this.clock = opts.clock;
    this.region = opts.region;
    this.inflightLimit = opts.inflightLimit ?? 120_000;
    this.longPolls = new LongPolls(this.store, this.clock);
    this.log = opts.log ?? { info() {}, warn() {}, error() {} };
    this.moveTasks = new MoveTaskRunner(this);
  }

  async resolveQueue(ctx: RequestContext, url: unknown): Promise<QueueRecord> {
    const addr = parseQueueUrl(url, ctx);
    const queue = await this.store.getQueue(addr.accountId, addr.name);
    if (!queue) throw errors.queueDoesNotExist();
    return queue;
  }

  arnOf(queue: Pick<QueueRecord, 'accountId' | 'name'>): string {
    return queueArn(this.region, queue.accountId, queue.name);
  }

  urlOf(ctx: RequestContext, queue: Pick<QueueRecord, 'accountId' | 'name'>): string {
    return queueUrl(ctx, queue.accountId, queue.name);
  }

  /** Starts background work: the retention sweep, once a second, and move tasks. */
  start(): void {
    this.moveTasks.start();
    const tick = () => {
      this.sweepRetention()
        .catch((err) => this.log.error({ err }, 'retention sweep failed'))
        .finally(() => { if (this.sweepTimer) this.sweepTimer = this.clock.schedule(1000, tick); });
    };
    this.sweepTimer = this.clock.schedule(1000, tick);
  }

  /** Deletes messages older than their queue's MessageRetentionPeriod. */
  async sweepRetention(): Promise<number> {
    let total = 0;
    const now = this.clock.now();
    for (const q of await this.store.allQueues()) {
      total += await this.store.deleteSentBefore(q.id, now - retentionMs(q));
    }
    await this.store.sweepExpired(now);
    return total;
  }

  /** Stops background work and answers every waiting long poll with no messages. */
  async close(): Promise<void> {
    this.sweepTimer?.cancel();
    this.sweepTimer = undefined;
    await this.moveTasks.stop();
    this.longPolls.releaseAll();
  }
}

export function retentionMs(q: QueueRecord): number {
  return Number(q.attributes.MessageRetentionPeriod ?? 345600) * 1000;
}

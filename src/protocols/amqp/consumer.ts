import type { Delivery } from '../../engine/amqp/broker.js';
import type { QueueRecord } from '../../engine/kernel/types.js';
import type { Holdings } from './limits.js';
import type { RegisteredConsumer } from './registry.js';

/** How long one receive of a consumer waits before it checks its queue again. */
const WAIT_MS = 20_000;
/** Most messages one receive asks for when no prefetch limits it. */
const BATCH = 50;

/** What a consumer needs of its channel. */
export interface ConsumerHost {
  /** The channel's consumers (its limit counts them). */
  readonly consumers: ReadonlyMap<string, unknown>;
  readonly host: { readonly holdings: Pick<Holdings, 'takeConsumer'> };
  /** Messages the consumer may take now (prefetch room, flow, socket back-pressure); 0 to wait. */
  credit(c: Consumer): number;
  /** Resolves when credit may have grown. */
  creditChanged(): Promise<void>;
  receive(queue: QueueRecord, max: number, signal: AbortSignal): Promise<Delivery[]>;
  deliver(c: Consumer, deliveries: Delivery[]): void;
  /** Gives back messages received after the consumer stopped. */
  giveBack(queue: QueueRecord, deliveries: Delivery[]): void;
  /** The queue is gone (or a receive failed): the client is told with basic.cancel. */
  cancelledByServer(c: Consumer, err?: unknown): void;
}

/**
 * A push consumer: a loop of long-poll receives on its queue, each asking for as many
 * messages as the prefetch leaves room for. It stops on basic.cancel, when its channel
 * closes, or when its queue is deleted; a receive in progress is aborted.
 */
export class Consumer implements RegisteredConsumer {
  active = true;
  /** Messages delivered to this consumer and not yet settled. */
  unacked = 0;
  private readonly abort = new AbortController();
  /** Gives back its slot: a consumer waits in the engine's long-poll pool, which has a cap. */
  private readonly release: () => void;

  /** Throws RabbitMQ's refusal when the channel, the account or the server has no room for another consumer. */
  constructor(
    readonly tag: string,
    readonly queue: QueueRecord,
    readonly noAck: boolean,
    readonly exclusive: boolean,
    private readonly host: ConsumerHost,
  ) {
    this.release = host.host.holdings.takeConsumer(queue.accountId, host.consumers.size);
  }

  start(): void {
    void this.run();
  }

  stop(): void {
    this.active = false;
    this.abort.abort();
    this.release();
  }

  queueDeleted(): void {
    if (!this.active) return;
    this.stop();
    this.host.cancelledByServer(this);
  }

  private async run(): Promise<void> {
    try {
      while (this.active) {
        const credit = this.host.credit(this);
        if (credit <= 0) {
          await this.host.creditChanged();
          continue;
        }
        const got = await this.host.receive(this.queue, Math.min(credit, BATCH), this.abort.signal);
        if (!this.active) {
          this.host.giveBack(this.queue, got);
          return;
        }
        if (got.length) this.host.deliver(this, got);
      }
    } catch (err) {
      if (!this.active) return;
      this.stop();
      this.host.cancelledByServer(this, err);
    }
  }
}

export { WAIT_MS as CONSUMER_WAIT_MS };

import type { AmqpBroker, Delivery } from '../../engine/amqp/broker.js';
import type { QueueRecord } from '../../engine/kernel/types.js';
import { CONSUMER_WAIT_MS } from '../amqp/consumer.js';
import type { RegisteredConsumer } from '../amqp/registry.js';

/** Most messages one receive asks for. */
const BATCH = 50;

/** What a sending link needs of its session. */
export interface OutgoingHost {
  readonly broker: AmqpBroker;
  /** Transfers (deliveries) the session and connection can take now. */
  room(): number;
  /** Resolves when room may have grown. */
  roomChanged(): Promise<void>;
  deliver(link: OutgoingLink, d: Delivery): void;
  /** The link's state, after a drain or when the peer asked for an echo. */
  sendFlow(link: OutgoingLink, drain: boolean): void;
  /** The queue is gone: the link is detached with amqp:not-found. */
  queueDeleted(link: OutgoingLink): void;
  failed(link: OutgoingLink, err: unknown): void;
}

/**
 * A link on which the server sends a queue's messages: a loop of long-poll receives, each
 * asking for as many messages as the link credit (and the session window, and the
 * connection's unsettled bound) allow. A drain takes what is ready without waiting, then
 * uses up the rest of the credit and says so in a flow.
 */
export class OutgoingLink implements RegisteredConsumer {
  readonly exclusive = false;
  active = true;
  credit = 0;
  deliveryCount = 0;
  drain = false;
  private poll?: AbortController;
  private waiters: (() => void)[] = [];

  constructor(
    readonly handle: number,
    readonly name: string,
    readonly queue: QueueRecord,
    /** At-most-once: deliveries go settled and are acknowledged as they are sent. */
    readonly settled: boolean,
    private readonly host: OutgoingHost,
  ) {}

  start(): void {
    void this.run();
  }

  /** The peer's flow for this link: its delivery-count and link-credit give the credit. */
  flow(peerDeliveryCount: number | undefined, linkCredit: number, drain: boolean): void {
    const counted = peerDeliveryCount ?? this.deliveryCount;
    this.credit = Math.max(0, counted + linkCredit - this.deliveryCount);
    this.drain = drain;
    if (drain) this.poll?.abort();
    this.wake();
  }

  wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  private changed(): Promise<void> {
    return new Promise((resolve) => {
      this.waiters.push(resolve);
      void this.host.roomChanged().then(resolve);
    });
  }

  stop(): void {
    this.active = false;
    this.poll?.abort();
    this.wake();
  }

  queueDeleted(): void {
    if (!this.active) return;
    this.stop();
    this.host.queueDeleted(this);
  }

  /** Delivered one message: the credit is used, the delivery-count moves on. */
  sent(): void {
    this.credit--;
    this.deliveryCount = (this.deliveryCount + 1) >>> 0;
  }

  private async run(): Promise<void> {
    try {
      while (this.active) {
        const room = Math.min(this.credit, this.host.room(), BATCH);
        if (room <= 0) {
          await this.changed();
          continue;
        }
        const drain = this.drain;
        const poll = new AbortController();
        this.poll = poll;
        const got = await this.host.broker.receive(this.queue, room, drain ? 0 : CONSUMER_WAIT_MS, poll.signal);
        this.poll = undefined;
        if (!this.active) {
          if (got.length) await this.host.broker.requeue(this.queue, got, false);
          return;
        }
        for (const d of got) this.host.deliver(this, d);
        if (drain && this.drain && got.length < room) this.endDrain();
      }
    } catch (err) {
      if (!this.active) return;
      this.stop();
      this.host.failed(this, err);
    }
  }

  /** Nothing more is ready: the credit left is used up, and the peer is told. */
  private endDrain(): void {
    this.deliveryCount = (this.deliveryCount + this.credit) >>> 0;
    this.credit = 0;
    this.host.sendFlow(this, true);
  }
}

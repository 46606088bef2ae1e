import type { AmqpBroker } from '../../engine/amqp/broker.js';
import { amqpErrors } from '../../engine/kernel/amqp-errors.js';
import type { Method } from './spec.js';
import type { Settle, Transaction } from './transaction.js';
import { byQueue, type Unacked } from './unacked.js';

/** What settling needs of its channel. */
export interface SettlerChannel {
  readonly broker: AmqpBroker;
  /** The channel's unacknowledged deliveries by delivery tag, in the order they went out. */
  readonly unacked: Map<bigint, Unacked>;
  readonly host: {
    readonly holdings: { settled(): void };
    /** Methods queued and not yet run. */
    backlog(delta: number): void;
  };
  enqueue(op: () => Promise<void> | void, method?: Method, always?: () => void): void;
  /** Settled deliveries made room: consumers waiting for credit look again. */
  wakeCredit(): void;
  /** The channel's transaction (tx.select): settles wait in it for tx.commit. */
  readonly tx?: Transaction;
}

/**
 * The settling side of a channel: basic.ack, basic.nack and basic.reject take deliveries
 * off its unacked list and ack, requeue or reject them, one store call per queue; acks
 * that arrive while the channel is busy are batched.
 */
export class Settler {
  /** The acks waiting to run, which later acks may join. */
  private openAcks?: { tag: bigint; multiple: boolean }[];

  constructor(private readonly channel: SettlerChannel) {}

  /** Another method was queued: later acks wait for it, in a batch of their own. */
  closeBatch(): void {
    this.openAcks = undefined;
  }

  ack(m: Method): void {
    const a = m.args;
    const ack = { tag: a.deliveryTag as bigint, multiple: Boolean(a.multiple) };
    if (this.openAcks) {
      this.openAcks.push(ack);
      this.channel.host.backlog(1);
      return;
    }
    const acks = [ack];
    this.channel.enqueue(
      () => this.ackBatch(acks),
      m,
      () => this.channel.host.backlog(1 - acks.length),
    );
    this.openAcks = acks;
  }

  /** ack, requeue or reject the delivery `tag` (with `multiple`, every one up to it; tag 0: all). */
  async settle(tag: bigint, multiple: boolean, how: Settle): Promise<void> {
    await this.applyOrHold(this.pick(tag, multiple), how);
  }

  /**
   * Acks that arrive while the channel is busy are settled together, one delete per
   * queue. An unknown tag among them closes the channel after the ones before it.
   */
  private async ackBatch(acks: { tag: bigint; multiple: boolean }[]): Promise<void> {
    if (this.openAcks === acks) this.openAcks = undefined;
    const picked: [bigint, Unacked][] = [];
    let error: unknown;
    try {
      for (const a of acks) picked.push(...this.pick(a.tag, a.multiple));
    } catch (e) {
      error = e;
    }
    await this.applyOrHold(picked, 'ack');
    if (error) throw error;
  }

  /** In a transaction the picked deliveries wait for tx.commit; else they are settled now. */
  private async applyOrHold(picked: [bigint, Unacked][], how: Settle): Promise<void> {
    if (this.channel.tx) this.channel.tx.settle(picked, how);
    else await this.apply(picked, how);
  }

  /** Takes the delivery `tag` (with `multiple`, every one up to it; tag 0: all) off the unacked list. */
  private pick(tag: bigint, multiple: boolean): [bigint, Unacked][] {
    const picked: [bigint, Unacked][] = [];
    if (multiple) {
      for (const [t, u] of this.channel.unacked) {
        if (tag !== 0n && t > tag) break;
        picked.push([t, u]);
        this.channel.unacked.delete(t);
      }
      if (picked.length === 0 && tag !== 0n) throw amqpErrors.precondition(`unknown delivery tag ${tag}`);
      return picked;
    }
    const u = this.channel.unacked.get(tag);
    if (!u) throw amqpErrors.precondition(`unknown delivery tag ${tag}`);
    this.channel.unacked.delete(tag);
    return [[tag, u]];
  }

  /** Settles the picked deliveries, one store call per queue (tx.commit calls it for what it held). */
  async apply(picked: [bigint, Unacked][], how: Settle): Promise<void> {
    try {
      for (const list of byQueue(picked.map(([, u]) => u.delivery))) {
        const queue = list[0]!.queue;
        if (how === 'ack') await this.channel.broker.ack(queue, list);
        else if (how === 'requeue') await this.channel.broker.requeue(queue, list);
        else for (const d of list) await this.channel.broker.reject(queue, d);
      }
    } finally {
      // Only now may consumers take more: a requeued message is back at the head first,
      // so with prefetch 1 it is the next one delivered, as in RabbitMQ.
      for (const [, u] of picked) if (u.consumer) u.consumer.unacked--;
      this.channel.wakeCredit();
      this.channel.host.holdings.settled();
    }
  }
}

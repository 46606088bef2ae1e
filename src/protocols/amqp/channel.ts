import type { AmqpBroker, Delivery } from '../../engine/amqp/broker.js';
import { amqpErrors, AmqpError, CODES } from '../../engine/kernel/amqp-errors.js';
import type { QueueRecord } from '../../engine/kernel/types.js';
import { Consumer, CONSUMER_WAIT_MS, type ConsumerHost } from './consumer.js';
import { deliveredProperties } from './death-headers.js';
import { newReplyAddress, REPLY_QUEUE, type ReplyTarget } from './direct-reply.js';
import { contentFrames, methodFrame } from './frames.js';
import { Publisher } from './publisher.js';
import type { AmqpRegistry } from './registry.js';
import type { Args, Method, MethodName } from './spec.js';
import { autoDeleteQueue, handleQueueMethod, queueNamed } from './queue-methods.js';
import { Settler } from './settler.js';
import type { Transaction, TransactionBudget } from './transaction.js';
import { handleTxMethod, rollback } from './tx-methods.js';
import { basicGet } from './basic-get.js';
import { byQueue, settleOnly, type Unacked } from './unacked.js';
import type { Holdings } from './limits.js';

/** What a channel needs of its connection. */
export interface ChannelHost {
  readonly id: number;
  readonly broker: AmqpBroker;
  readonly registry: AmqpRegistry;
  readonly frameMax: number;
  /** The largest message body a publish may have. */
  readonly maxMessageBytes: number;
  /** What the connection holds of the limited resources (unfinished publishes, unacknowledged deliveries). */
  readonly holdings: Holdings;
  write(frames: Buffer[]): void;
  /** Whether the socket's buffer is below its high-water mark. */
  writable(): boolean;
  /** Resolves once the socket drains (or the connection ends). */
  drained(): Promise<void>;
  /** A connection-level error raised while serving this channel. */
  fail(err: AmqpError): void;
  /** Methods queued on channels and not yet run: the connection stops reading while too many are. */
  backlog(delta: number, bytes?: number): void;
  /** What the connection's transactions hold. */
  readonly transactions: TransactionBudget;
  /** The client announced consumer_cancel_notify (RabbitMQ sends basic.cancel only then). */
  readonly hearsCancel: boolean;
}

/**
 * One AMQP channel: its methods run one at a time, in order, on a promise chain (so
 * publishes reach their queues in the order they were sent and confirms go out in order);
 * consumers run beside it. On close every unacknowledged message goes back to its queue.
 */
export class Channel implements ConsumerHost, ReplyTarget {
  open = true;
  /** A channel.close was sent; everything but close-ok is ignored until it comes. */
  closing = false;
  /** The client sent channel.close: what it sent after is ignored; what it sent before still runs. */
  closedByPeer = false;
  private chain: Promise<void> = Promise.resolve();
  readonly publisher = new Publisher(this);
  readonly settler = new Settler(this);
  private deliveryTag = 0n;
  readonly unacked = new Map<bigint, Unacked>();
  readonly consumers = new Map<string, Consumer>();
  /** basic.qos's counts, per consumer and for the channel (read by live-view.ts). */
  prefetchConsumer = 0;
  prefetchChannel = 0;
  private flowActive = true;
  private creditWaiters: (() => void)[] = [];
  private consumerSeq = 0;
  lastDeclared = '';
  /** Set by tx.select: publishes and settles wait in it for tx.commit. */
  tx?: Transaction;
  /** Direct reply-to: this channel's reply consumer and the address its replies come to. */
  private replies?: { tag: string; address: string };

  constructor(
    readonly number: number,
    readonly host: ChannelHost,
  ) {}

  get broker(): AmqpBroker {
    return this.host.broker;
  }

  /** The next delivery tag of this channel (basic.deliver, basic.get-ok). */
  nextDeliveryTag(): bigint {
    return ++this.deliveryTag;
  }

  get accountId(): string {
    return this.broker.accountId;
  }

  send(name: MethodName, args?: Args): void {
    this.host.write([methodFrame(this.number, name, args)]);
  }

  /**
   * Runs `op` after every earlier method of the channel; a failure closes the channel.
   * `always` runs after it, and also when the channel closed first and `op` never ran.
   */
  enqueue(op: () => Promise<void> | void, method?: Method, always?: () => void): void {
    this.publisher.closeBatch();
    this.settler.closeBatch();
    this.host.backlog(1);
    this.chain = this.chain.then(async () => {
      try {
        if (this.open && !this.closing) await op();
      } catch (e) {
        this.raise(e, method);
      } finally {
        always?.();
        this.host.backlog(-1);
      }
    });
  }

  raise(e: unknown, method?: Method): void {
    const err = e instanceof AmqpError ? e : new AmqpError(CODES.INTERNAL_ERROR, (e as Error)?.message ?? String(e));
    if (method && !err.classId) {
      err.classId = method.classId;
      err.methodId = method.methodId;
    }
    if (err.hard) this.host.fail(err);
    else this.closeWith(err);
  }

  /**
   * channel.close from the client: the methods it sent before (publishes still being
   * stored, acks) run first, as in RabbitMQ, then the channel gives its messages back
   * and `done` answers close-ok.
   */
  closeByPeer(done: () => void): void {
    this.closedByPeer = true;
    this.publisher.closeBatch();
    this.settler.closeBatch();
    this.chain = this.chain.then(async () => {
      this.open = false;
      await this.release().catch(() => undefined);
      done();
    });
  }

  /** Closes the channel from the server's side with the error's code. */
  closeWith(err: AmqpError): void {
    if (this.closing || !this.open) return;
    this.closing = true;
    this.send('channel.close', {
      replyCode: err.code,
      replyText: err.replyText,
      classId: err.classId,
      methodId: err.methodId,
    });
    void this.release();
  }

  /** Stops consumers and gives every unacknowledged message back. */
  async release(): Promise<void> {
    this.publisher.abandon();
    const consumers = [...this.consumers.values()];
    for (const c of consumers) this.stopConsumer(c);
    this.consumers.clear();
    this.stopReplies();
    // An uncommitted transaction is dropped: its publishes never stored, its settles undone.
    rollback(this);
    const all = [...this.unacked.values()].map((u) => u.delivery);
    this.unacked.clear();
    this.wakeCredit();
    this.host.holdings.settled();
    await this.requeueAll(all).catch(() => undefined);
    // Auto-delete queues go with their last consumer, however the channel ended.
    for (const c of consumers) await autoDeleteQueue(this, c.queue).catch(() => undefined);
  }

  private async requeueAll(deliveries: Delivery[]): Promise<void> {
    for (const list of byQueue(deliveries)) await this.broker.requeue(list[0]!.queue, list);
  }

  // --- methods -----------------------------------------------------------------------

  /** Dispatches a method of this (open) channel. */
  handle(m: Method): void {
    const a = m.args;
    switch (m.name) {
      case 'basic.publish':
        return this.publisher.start(m);
      case 'basic.ack':
        return this.settler.ack(m);
      case 'basic.reject':
        return this.enqueue(
          () => this.settler.settle(a.deliveryTag as bigint, false, a.requeue ? 'requeue' : 'reject'),
          m,
        );
      case 'basic.nack':
        return this.enqueue(
          () => this.settler.settle(a.deliveryTag as bigint, Boolean(a.multiple), a.requeue ? 'requeue' : 'reject'),
          m,
        );
      case 'basic.qos':
        return this.enqueue(() => this.qos(a), m);
      case 'basic.consume':
        return this.enqueue(() => this.consume(a), m);
      case 'basic.cancel':
        return this.enqueue(() => this.cancel(String(a.consumerTag), Boolean(a.noWait)), m);
      case 'basic.get':
        return this.enqueue(() => basicGet(this, a), m);
      case 'basic.recover':
      case 'basic.recover-async':
        return this.enqueue(() => this.recover(m), m);
      case 'confirm.select':
        return this.enqueue(() => {
          if (this.tx) throw amqpErrors.precondition('cannot switch from tx to confirm mode');
          this.publisher.confirming = true;
          if (!a.noWait) this.send('confirm.select-ok');
        }, m);
      case 'channel.flow':
        return this.enqueue(() => {
          this.flowActive = Boolean(a.active);
          this.wakeCredit();
          this.send('channel.flow-ok', { active: this.flowActive });
        }, m);
      case 'tx.select':
      case 'tx.commit':
      case 'tx.rollback':
        return this.enqueue(() => handleTxMethod(this, m), m);
      default:
        return this.enqueue(() => handleQueueMethod(this, m), m);
    }
  }

  private qos(a: Args): void {
    if (Number(a.prefetchSize) !== 0) throw amqpErrors.notImplemented(`prefetch_size!=0 (${String(a.prefetchSize)})`);
    if (a.global) this.prefetchChannel = Number(a.prefetchCount);
    else this.prefetchConsumer = Number(a.prefetchCount);
    this.wakeCredit();
    this.send('basic.qos-ok');
  }

  private async consume(a: Args): Promise<void> {
    if (a.queue === REPLY_QUEUE) return this.consumeReplies(a);
    const queue = await this.broker.queue(queueNamed(this, a.queue));
    this.host.registry.checkOwner(queue.id, queue.name, this.host.id);
    // RabbitMQ's quorum queues have no per-channel prefetch: a consumer under one is refused.
    if (this.prefetchChannel > 0 && (await this.broker.isQuorum(queue)))
      throw amqpErrors.notImplemented(`queue '${queue.name}' in vhost '/' does not support global qos`);
    const tag = this.consumerTag(a);
    const c = new Consumer(tag, queue, Boolean(a.noAck), Boolean(a.exclusive), this);
    this.host.registry.addConsumer(queue.id, queue.name, c);
    this.consumers.set(tag, c);
    if (!a.noWait) this.send('basic.consume-ok', { consumerTag: tag });
    c.start();
  }

  private consumerTag(a: Args): string {
    let tag = String(a.consumerTag);
    if (tag === '') tag = `amq.ctag-${this.host.id}-${this.number}-${++this.consumerSeq}`;
    if (this.consumers.has(tag) || this.replies?.tag === tag)
      throw new AmqpError(CODES.NOT_ALLOWED, `attempt to reuse consumer tag '${tag}'`);
    return tag;
  }

  /** Direct reply-to: the channel consumes its replies, in no-ack mode, as RabbitMQ requires. */
  private consumeReplies(a: Args): void {
    if (!a.noAck) throw amqpErrors.precondition('reply consumer cannot acknowledge');
    if (this.replies) throw amqpErrors.precondition('reply consumer already set');
    const tag = this.consumerTag(a);
    this.replies = { tag, address: newReplyAddress() };
    this.host.registry.replies.set(this.replies.address, this);
    if (!a.noWait) this.send('basic.consume-ok', { consumerTag: tag });
  }

  private stopReplies(): void {
    if (this.replies) this.host.registry.replies.delete(this.replies.address);
    this.replies = undefined;
  }

  replyAddress(): string {
    if (!this.replies) throw amqpErrors.precondition('fast reply consumer does not exist');
    return this.replies.address;
  }

  replyTarget(address: string): ReplyTarget | undefined {
    const target = this.host.registry.replies.get(address);
    return target?.accountId === this.accountId ? target : undefined;
  }

  deliverReply(reply: { exchange: string; routingKey: string; properties: Buffer; body: Buffer }): void {
    if (!this.open || this.closing || !this.replies) return;
    this.host.write([
      methodFrame(this.number, 'basic.deliver', {
        consumerTag: this.replies.tag,
        deliveryTag: ++this.deliveryTag,
        redelivered: false,
        exchange: reply.exchange,
        routingKey: reply.routingKey,
      }),
      ...contentFrames(this.number, reply.properties, reply.body, this.host.frameMax),
    ]);
  }

  private async cancel(tag: string, noWait: boolean): Promise<void> {
    if (this.replies?.tag === tag) this.stopReplies();
    const c = this.consumers.get(tag);
    if (c) {
      this.consumers.delete(tag);
      await this.afterStop(c);
    }
    if (!noWait) this.send('basic.cancel-ok', { consumerTag: tag });
  }

  private stopConsumer(c: Consumer): number {
    c.stop();
    return this.host.registry.removeConsumer(c.queue.id, c);
  }

  /** An auto-delete queue goes when its last consumer does. */
  private async afterStop(c: Consumer): Promise<void> {
    this.stopConsumer(c);
    await autoDeleteQueue(this, c.queue);
  }

  private async recover(m: Method): Promise<void> {
    if (!m.args.requeue) throw amqpErrors.notImplemented('requeue=false');
    const all = [...this.unacked.values()];
    this.unacked.clear();
    for (const u of all) if (u.consumer) u.consumer.unacked--;
    await this.requeueAll(all.map((u) => u.delivery));
    this.wakeCredit();
    this.host.holdings.settled();
    if (m.name === 'basic.recover') this.send('basic.recover-ok');
  }

  // --- consumers (ConsumerHost) ------------------------------------------------------

  credit(c: Consumer): number {
    if (!this.open || this.closing || !this.flowActive || !this.host.writable()) return 0;
    if (c.noAck) return Infinity;
    let room = this.host.holdings.unackedRoom();
    if (this.prefetchConsumer > 0) room = this.prefetchConsumer - c.unacked;
    if (this.prefetchChannel > 0) room = Math.min(room, this.prefetchChannel - this.unacked.size);
    return room;
  }

  creditChanged(): Promise<void> {
    if (!this.host.writable()) return this.host.drained();
    if (this.host.holdings.unackedRoom() <= 0) return this.host.holdings.roomChanged();
    return new Promise((resolve) => this.creditWaiters.push(resolve));
  }

  wakeCredit(): void {
    const waiters = this.creditWaiters;
    this.creditWaiters = [];
    for (const w of waiters) w();
  }

  async receive(queue: QueueRecord, max: number, signal: AbortSignal): Promise<Delivery[]> {
    const got = await this.broker.receive(queue, max, CONSUMER_WAIT_MS, signal);
    // A message claimed after the consumer stopped goes straight back.
    if (signal.aborted && got.length) {
      await this.broker.requeue(queue, got, false);
      return [];
    }
    if (!got.length && !signal.aborted) await this.broker.queue(queue.name);
    return got;
  }

  deliver(c: Consumer, deliveries: Delivery[]): void {
    const frames: Buffer[] = [];
    const acks: Delivery[] = [];
    for (const d of deliveries) {
      const tag = ++this.deliveryTag;
      if (c.noAck) acks.push(d);
      else {
        this.unacked.set(tag, { delivery: settleOnly(d), consumer: c });
        c.unacked++;
      }
      frames.push(
        methodFrame(this.number, 'basic.deliver', {
          consumerTag: c.tag,
          deliveryTag: tag,
          redelivered: d.redelivered,
          exchange: d.content.exchange,
          routingKey: d.content.routingKey,
        }),
        ...contentFrames(this.number, deliveredProperties(d.content), d.content.body, this.host.frameMax),
      );
    }
    this.host.write(frames);
    if (acks.length) this.broker.ack(c.queue, acks).catch((e) => this.raise(e));
  }

  giveBack(queue: QueueRecord, deliveries: Delivery[]): void {
    if (deliveries.length) this.broker.requeue(queue, deliveries, false).catch(() => undefined);
  }

  cancelledByServer(c: Consumer): void {
    if (this.consumers.get(c.tag) !== c) return;
    this.consumers.delete(c.tag);
    this.host.registry.removeConsumer(c.queue.id, c);
    if (this.open && !this.closing && this.host.hearsCancel)
      this.send('basic.cancel', { consumerTag: c.tag, noWait: true });
  }
}

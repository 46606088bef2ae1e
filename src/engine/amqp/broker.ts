import { randomBytes } from 'node:crypto';
import { deadLetterHeld, receiveRule } from '../dead-letters/road.js';
import type { AmqpEngine } from './amqp-engine.js';
import { SqsError } from '../kernel/errors.js';
import type { Cancellation } from '../messages/long-poll.js';
import { defaultAttributes, parseAttributes, retentionMs } from '../queues/queue-attributes.js';
import type { AmqpQueueRecord } from '../store/exchanges.js';
import type { QueueAddress } from '../kernel/addressing.js';
import type { DeathReason, MessageAttributes, QueueRecord } from '../kernel/types.js';
import { amqpErrors } from '../kernel/amqp-errors.js';
import { AmqpExchanges } from './exchanges.js';
import { envelopeOf } from '../routing/envelope.js';
import { countReleased, mergeContent, type ContentChange } from './held-rewrite.js';
import { deliveriesHere, fromStored, type AmqpContent } from './messages.js';
import { publishable, publishBatch, type Publish, type PublishResult } from './publish.js';
import { attributesOf, checkEquivalent, checkQueueArguments } from './queue-arguments.js';
import { newQueue } from '../store/queues.js';
import { messageCounts } from '../store/messages.js';

/**
 * How long a delivered, unacknowledged message stays in flight: RabbitMQ's default
 * consumer_timeout. A channel that closes gives its messages back at once.
 */
const DELIVERY_VISIBILITY_MS = 30 * 60_000;

export interface QueueDeclaration {
  name: string;
  passive: boolean;
  durable: boolean;
  exclusive: boolean;
  autoDelete: boolean;
  arguments: Record<string, unknown>;
}

/** A message handed to an AMQP consumer, with what settling it needs. */
export interface Delivery {
  queue: QueueRecord;
  seq: number;
  token: string;
  messageId: string;
  sentAt: number;
  redelivered: boolean;
  /** How many times it has been delivered from this queue, this time included. */
  receiveCount: number;
  /** How many of those an AMQP 1.0 receiver gave back `released`, which count as no delivery (held-rewrite.ts). */
  released: number;
  content: AmqpContent;
  /** The stored system attributes (the envelope), for a rewrite while it is held. */
  system?: MessageAttributes;
}

/**
 * AMQP's operations for one account, on the engine's queues: the rules of publishing,
 * routing, delivering and settling. The protocol adapter (src/protocols/amqp) keeps the
 * connection and channel state and calls these.
 */
export class AmqpBroker {
  readonly exchanges: AmqpExchanges;

  constructor(
    private readonly engine: AmqpEngine,
    readonly accountId: string,
  ) {
    this.exchanges = new AmqpExchanges(engine, accountId);
  }

  /** AMQP has no regions: its queues live in the server's default region (docs/amqp.md). */
  address(name: string): QueueAddress {
    return { accountId: this.accountId, region: this.engine.region, name };
  }

  /** The queue, or RabbitMQ's 404. */
  async queue(name: string): Promise<QueueRecord> {
    const q = await this.engine.store.queues.get(this.address(name));
    if (!q) throw amqpErrors.noQueue(name);
    return q;
  }

  /** A server-named queue, as RabbitMQ names them (with `-` for `.`: queue names must be ARN-safe). */
  static generatedName(): string {
    return `amq-gen-${randomBytes(16).toString('base64url')}`;
  }

  async declareQueue(
    d: QueueDeclaration,
  ): Promise<{ queue: QueueRecord; record?: AmqpQueueRecord; messageCount: number }> {
    if (d.passive) {
      const queue = await this.queue(d.name);
      return {
        queue,
        record: await this.engine.store.exchanges.queue(queue.id),
        messageCount: await this.messageCount(queue),
      };
    }
    if (d.name.startsWith('amq.'))
      throw amqpErrors.accessRefused(`queue name '${d.name}' contains reserved prefix 'amq.*'`);
    // Any UTF-8 name a short string holds, as in RabbitMQ (its URL and ARN percent-encode
    // it); but not `.fifo`, which SQS clients read as a FIFO queue, and AMQP cannot route to one.
    if (d.name.endsWith('.fifo')) {
      throw amqpErrors.precondition(
        `queue name '${d.name}' is not supported: a name ending in .fifo is an SQS FIFO queue's, which AMQP cannot use`,
      );
    }
    checkQueueArguments(d.name, d.arguments);
    const given: AmqpQueueRecord = {
      queueId: 0,
      durable: d.durable,
      exclusive: d.exclusive,
      autoDelete: d.autoDelete,
      arguments: d.arguments,
    };
    const existing = await this.engine.store.queues.get(this.address(d.name));
    if (existing) {
      const record = await this.engine.store.exchanges.queue(existing.id);
      // A queue made over SQS adopts its first AMQP declaration.
      if (record) checkEquivalent(d.name, record, given);
      else await this.engine.store.exchanges.setQueue({ ...given, queueId: existing.id });
      return {
        queue: existing,
        record: record ?? { ...given, queueId: existing.id },
        messageCount: await this.messageCount(existing),
      };
    }
    let attributes: Record<string, string>;
    try {
      attributes = { ...defaultAttributes(false), ...parseAttributes(attributesOf(d.arguments), false, 'create') };
    } catch (e) {
      throw amqpErrors.precondition(
        `invalid arguments for queue '${d.name}' in vhost '/': ${e instanceof SqsError ? e.message : String(e)}`,
        e,
      );
    }
    const now = this.engine.clock.now();
    const { queue, created } = await this.engine.createWithinQuota(
      newQueue({ ...this.address(d.name), fifo: false, attributes }, now),
      (e) =>
        amqpErrors.precondition(
          `cannot declare queue '${d.name}': queue limit in vhost '/' (${this.engine.queueQuota.max}) is reached`,
          e,
        ),
    );
    if (created) {
      this.engine.log.info(
        {
          queue: d.name,
          account: this.accountId,
          region: this.engine.region,
          fifo: false,
          via: 'amqp',
          durable: d.durable,
          exclusive: d.exclusive,
          autoDelete: d.autoDelete,
          arguments: Object.keys(d.arguments),
        },
        'queue created',
      );
    }
    const record = { ...given, queueId: queue.id };
    await this.engine.store.exchanges.setQueue(record);
    return { queue, record, messageCount: 0 };
  }

  /** Ready messages, as queue.declare-ok and basic.get-ok count them. */
  async messageCount(queue: QueueRecord): Promise<number> {
    return (await messageCounts(this.engine.store.messages, queue.id, this.engine.clock.now())).visible;
  }

  async deleteQueue(queue: QueueRecord, ifEmpty: boolean): Promise<number> {
    const counts = await messageCounts(this.engine.store.messages, queue.id, this.engine.clock.now());
    const total = counts.visible + counts.inflight + counts.delayed;
    if (ifEmpty && total > 0) throw amqpErrors.precondition(`queue '${queue.name}' in vhost '/' not empty`);
    const sources = await this.exchanges.sourcesOf('queue', queue.name);
    await this.engine.store.queues.delete(queue.id);
    await this.engine.store.exchanges.unbindDestination(this.accountId, 'queue', queue.name);
    this.engine.bindingQuota.forget(this.accountId);
    this.engine.queueDeleted(queue.id);
    await this.exchanges.autoDelete(sources);
    this.engine.log.info(
      { queue: queue.name, account: queue.accountId, by: this.accountId, via: 'amqp' },
      'queue deleted',
    );
    return counts.visible;
  }

  /** Removes the ready messages; messages delivered and not yet acknowledged stay, as in RabbitMQ. */
  async purge(queue: QueueRecord): Promise<number> {
    const n = await this.messageCount(queue);
    await this.engine.store.queues.purge(queue.id, this.engine.clock.now(), 0);
    return n;
  }

  async bindQueue(
    queueName: string,
    exchange: string,
    routingKey: string,
    args: Record<string, unknown>,
    bind: boolean,
  ): Promise<void> {
    await this.queue(queueName);
    await this.exchanges.source(exchange);
    await this.exchanges.bind(
      { source: exchange, destinationKind: 'queue', destination: queueName, routingKey, arguments: args },
      bind,
    );
  }

  async bindExchange(
    destination: string,
    source: string,
    routingKey: string,
    args: Record<string, unknown>,
    bind: boolean,
  ): Promise<void> {
    await this.exchanges.source(source);
    await this.exchanges.source(destination);
    await this.exchanges.bind({ source, destinationKind: 'exchange', destination, routingKey, arguments: args }, bind);
  }

  /** Routes and stores a channel's publishes, in order (see publish.ts). */
  publish(batch: Publish[]): Promise<{ results: PublishResult[]; error?: unknown }> {
    return publishBatch(this.engine, this.exchanges, this.accountId, batch);
  }

  /** Throws the error a publish to `exchange` would get (a transaction checks at publish, stores at commit). */
  checkPublishable(exchange: string): Promise<void> {
    return publishable(this.exchanges, exchange);
  }

  /** Up to `max` messages of the queue, waiting up to `waitMs` for the first (a long poll). */
  async receive(queue: QueueRecord, max: number, waitMs: number, signal?: Cancellation): Promise<Delivery[]> {
    const deadLetter = await receiveRule(this.engine, queue);
    const attempt = async () => {
      const now = this.engine.clock.now();
      const r = await this.engine.store.messages.receive(queue.id, {
        now,
        max,
        visibilityTimeoutMs: DELIVERY_VISIBILITY_MS,
        retentionCutoff: now - retentionMs(queue),
        newToken: this.engine.deliveryHolders.newToken,
        deadLetter,
      });
      this.engine.deadLettered(queue, r.deadLettered);
      return r;
    };
    // Consumers start by the hundred: their first attempts take turns (long-poll.ts).
    const messages = await this.engine.longPolls.wait(queue.id, waitMs, attempt, signal, max, true);
    // A delivery is a receive (docs/monitoring.md); a consumer's idle wait is no empty receive.
    if (messages.length) this.engine.observer.received(queue, messages.length);
    return messages.map((m) => {
      const env = envelopeOf(m, queue.name);
      const here = deliveriesHere(m, env);
      return {
        queue,
        seq: m.seq,
        token: m.receiptToken!,
        messageId: m.messageId,
        sentAt: m.sentAt,
        redelivered: here > 1,
        receiveCount: here,
        released: env.released ?? 0,
        content: fromStored(m, queue.name, env),
        system: m.systemAttributes,
      };
    });
  }

  /** The queue's delivery limit: set by argument or policy, and, as in RabbitMQ, for quorum queues only. */
  private async deliveryLimit(queue: QueueRecord): Promise<number | undefined> {
    const limit = this.engine.settingsOf(queue).deliveryLimit;
    if (limit === undefined) return undefined;
    return (await this.isQuorum(queue)) ? limit : undefined;
  }

  /** Whether the queue was declared a quorum queue (`x-queue-type`). */
  async isQuorum(queue: QueueRecord): Promise<boolean> {
    return (await this.engine.store.exchanges.queue(queue.id))?.arguments['x-queue-type'] === 'quorum';
  }

  /** basic.ack: deletes the messages (only under their current receipt). */
  async ack(queue: QueueRecord, deliveries: Delivery[]): Promise<void> {
    if (!deliveries.length) return;
    const outcomes = await this.engine.store.messages.delete(queue.id, deliveries, {
      now: this.engine.clock.now(),
      requireCurrent: true,
    });
    const ok = outcomes.filter((o) => o === 'ok').length;
    if (ok) this.engine.observer.deleted(queue, ok);
  }

  /**
   * Requeue: the messages become visible again at their original position (visibility
   * set back to when they were sent), so they are delivered again first, as RabbitMQ does.
   * With a delivery limit (quorum queues), a message returned after more deliveries than
   * the limit is dead-lettered (`delivery_limit`) instead; `returned` is false for
   * messages the consumer never got, which do not count.
   */
  async requeue(queue: QueueRecord, deliveries: Delivery[], returned = true): Promise<void> {
    const limit = returned ? await this.deliveryLimit(queue) : undefined;
    if (limit !== undefined) {
      const counted = (x: Delivery) => x.receiveCount - x.released;
      for (const d of deliveries.filter((x) => counted(x) > limit)) await this.deadLetter(queue, d, 'delivery_limit');
      deliveries = deliveries.filter((x) => counted(x) <= limit);
    }
    if (!deliveries.length) return;
    const now = this.engine.clock.now();
    await this.engine.store.messages.changeVisibility(
      queue.id,
      deliveries.map((d) => ({
        seq: d.seq,
        token: d.token,
        visibilityTimeoutMs: Math.min(0, d.sentAt - now),
        maxSinceReceiveMs: Number.MAX_SAFE_INTEGER,
        requireCurrent: true,
      })),
      now,
    );
  }

  /**
   * AMQP 1.0's `released` (and `modified` with neither flag): requeued, and counted as
   * released, so the delivery counts neither toward a delivery limit nor in the header's
   * delivery-count, as in RabbitMQ 4.
   */
  async release(queue: QueueRecord, deliveries: Delivery[]): Promise<void> {
    await countReleased(this.engine, queue, deliveries);
    await this.requeue(queue, deliveries, false);
  }

  /**
   * AMQP 1.0's `modified` with message annotations: merged into the message (what
   * `change` makes of it) before it is requeued or dead-lettered; on quorum queues only,
   * as RabbitMQ 4 keeps them (a classic queue ignores them).
   */
  async annotate(
    queue: QueueRecord,
    deliveries: Delivery[],
    change: (d: Delivery) => ContentChange | undefined,
  ): Promise<void> {
    if (await this.isQuorum(queue)) await mergeContent(this.engine, queue, deliveries, change);
  }

  /**
   * basic.reject / basic.nack without requeue: dead-lettered with reason `rejected` if the
   * queue has a dead-letter target; otherwise dropped, as RabbitMQ drops it, and counted
   * and logged as a drop.
   */
  reject(queue: QueueRecord, d: Delivery): Promise<void> {
    return this.deadLetter(queue, d, 'rejected');
  }

  private async deadLetter(queue: QueueRecord, d: Delivery, reason: DeathReason): Promise<void> {
    await deadLetterHeld(this.engine, queue, d, reason, { withoutTarget: 'drop', messageId: d.messageId });
  }
}

import type { AmqpBroker } from '../../engine/amqp/broker.js';
import { amqpErrors, AmqpError, CODES } from '../../engine/kernel/amqp-errors.js';
import type { Publish } from '../../engine/amqp/publish.js';
import { plainTable } from './codec.js';
import { senderSelected } from './death-headers.js';
import { contentHeaderCost } from './decoded-cost.js';
import { contentFrames, methodFrame } from './frames.js';
import { isReplyAddress, REPLY_QUEUE, type ReplyTarget, withReplyTo } from './direct-reply.js';
import { decodeHeader, propertiesFromRaw } from './properties.js';
import type { Args, Method, MethodName } from './spec.js';
import type { QueuedPublish } from './queued-publish.js';
import type { Transaction } from './transaction.js';

/** What a publisher needs of its channel. */
export interface PublisherChannel {
  readonly number: number;
  readonly broker: AmqpBroker;
  readonly host: {
    readonly frameMax: number;
    /** The largest message body a publish may have (--amqp-max-message-size). */
    readonly maxMessageBytes: number;
    readonly holdings: { holdContent(delta: number): void };
    write(frames: Buffer[]): void;
    fail(err: AmqpError): void;
    /** Methods (and bytes of complete messages) queued and not yet run. */
    backlog(delta: number, bytes?: number): void;
  };
  enqueue(op: () => Promise<void> | void, method?: Method, always?: () => void): void;
  raise(e: unknown, method?: Method): void;
  send(name: MethodName, args?: Args): void;
  /** The channel's transaction (tx.select): publishes wait in it for tx.commit. */
  readonly tx?: Transaction;
  /** Direct reply-to: this channel's reply address; 406 if it has no reply consumer. */
  replyAddress(): string;
  /** Direct reply-to: the channel consuming replies at `address`, if it is there and of this account. */
  replyTarget(address: string): ReplyTarget | undefined;
}

/** Most publishes stored in one batch. */
const MAX_BATCH = 256;

interface PendingPublish {
  args: Args;
  bodySize?: number;
  /** The properties as received, copied out of the socket's chunk: decoded again once the body is in. */
  rawProperties?: Buffer;
  hasHeaders?: boolean;
  /** What the decoded headers take (decoded-cost.ts), counted once the message waits to be stored. */
  headersCost: number;
  expiration?: string;
  replyTo?: string;
  chunks: Buffer[];
  received: number;
  /** Counted as held: the properties' and body's bytes received. */
  held: number;
}

/**
 * The publishing side of a channel: assembles basic.publish with its content header and
 * body frames, batches publishes that arrive while the channel is busy, and answers
 * with returns (mandatory) and publisher confirms, in order.
 */
export class Publisher {
  /** confirm.select was received. */
  confirming = false;
  private publishSeq = 0;
  private publishing?: PendingPublish;
  /** The publish batch waiting to run, which later publishes may join. */
  private openBatch?: QueuedPublish[];

  constructor(private readonly channel: PublisherChannel) {}

  /** Another method was queued: later publishes must not overtake it. */
  closeBatch(): void {
    this.openBatch = undefined;
  }

  start(method: Method): void {
    this.publishing = { args: method.args, chunks: [], received: 0, held: 0, headersCost: 0 };
  }

  get expectingContent(): boolean {
    return this.publishing !== undefined;
  }

  /** A content header frame; the publish completes here if the body is empty. */
  header(payload: Buffer): void {
    const p = this.publishing;
    if (!p || p.bodySize !== undefined)
      throw amqpErrors.unexpectedFrame('expected method frame, got non method frame instead');
    // Weighed before it is decoded: what the decoded tables would hold, and refused over the caps.
    const cost = contentHeaderCost(payload);
    if ('refused' in cost) return this.refuse(amqpErrors.precondition(cost.refused));
    const h = decodeHeader(payload);
    if (h.classId !== 60)
      throw amqpErrors.unexpectedFrame(`expected content header for class 60, got one for class ${h.classId} instead`);
    p.bodySize = h.bodySize;
    // Only the bytes are kept while the body is awaited: decoded tables are many small
    // objects, which cost the garbage collector's time as well as memory.
    p.rawProperties = Buffer.from(h.raw);
    p.hasHeaders = h.properties.headers !== undefined;
    p.headersCost = cost.bytes;
    p.expiration = h.properties.expiration;
    p.replyTo = h.properties.replyTo;
    const max = this.channel.host.maxMessageBytes;
    if (h.bodySize > max)
      return this.refuse(
        amqpErrors.precondition(`message size ${h.bodySize} is larger than configured max size ${max}`),
      );
    this.hold(p, p.rawProperties.length);
    if (h.bodySize === 0) this.finishPublish();
  }

  /** Refuses the publish whose header this is: the channel closes with `err`. */
  private refuse(err: AmqpError): void {
    this.publishing = undefined;
    // The body frames still to come are skipped by the connection (the channel is closing).
    this.channel.raise(err, { name: 'basic.publish', classId: 60, methodId: 40, args: {} });
  }

  body(payload: Buffer): void {
    const p = this.publishing;
    if (!p || p.bodySize === undefined)
      throw amqpErrors.unexpectedFrame('expected method frame, got non method frame instead');
    p.chunks.push(payload);
    p.received += payload.length;
    this.hold(p, payload.length);
    if (p.received > p.bodySize)
      throw amqpErrors.frameError(`body of ${p.received} bytes, more than the ${p.bodySize} its header announced`);
    if (p.received === p.bodySize) this.finishPublish();
  }

  /** The channel closed mid-publish: the bytes received so far are given back. */
  abandon(): void {
    const p = this.publishing;
    this.publishing = undefined;
    if (p?.held) this.channel.host.holdings.holdContent(-p.held);
  }

  /** Counts bytes held for an unfinished publish (throws 506 over a limit). */
  private hold(p: PendingPublish, bytes: number): void {
    p.held += bytes;
    this.channel.host.holdings.holdContent(bytes);
  }

  private finishPublish(): void {
    const p = this.publishing!;
    this.publishing = undefined;
    if (p.held) this.channel.host.holdings.holdContent(-p.held);
    // As RabbitMQ 3: refused once the whole message is in.
    if (p.args.immediate) return this.channel.host.fail(new AmqpError(CODES.NOT_IMPLEMENTED, 'immediate=true', 60, 40));
    const body = p.chunks.length === 1 ? p.chunks[0]! : Buffer.concat(p.chunks);
    const headers = p.hasHeaders ? propertiesFromRaw(p.rawProperties!).headers : undefined;
    const { cc, bcc, properties } = senderSelected(p.rawProperties!, headers);
    const item: QueuedPublish = {
      seq: this.confirming ? ++this.publishSeq : 0,
      bytes: body.length + p.headersCost,
      mandatory: Boolean(p.args.mandatory),
      directReply: p.replyTo === REPLY_QUEUE,
      publish: {
        content: { body, properties, exchange: String(p.args.exchange), routingKey: String(p.args.routingKey) },
        headers: headers && plainTable(headers),
        cc,
        bcc,
        expiration: p.expiration,
      },
    };
    try {
      item.publish.expirationMs = parseExpiration(p.expiration);
    } catch (e) {
      item.error = e;
    }
    // Publishes that arrive while the channel is busy join the batch waiting to run, as
    // long as no other method came between them.
    this.channel.host.backlog(0, item.bytes);
    const method = { name: 'basic.publish' as const, classId: 60, methodId: 40, args: p.args };
    if (isReplyAddress(item.publish.content.exchange, item.publish.content.routingKey)) {
      this.channel.enqueue(
        () => this.reply(item),
        method,
        () => this.channel.host.backlog(0, -item.bytes),
      );
      return;
    }
    if (this.openBatch && this.openBatch.length < MAX_BATCH) {
      this.openBatch.push(item);
      this.channel.host.backlog(1);
      return;
    }
    const batch = [item];
    const bytes = () => batch.reduce((n, it) => n + it.bytes, 0);
    this.channel.enqueue(
      () => {
        if (this.openBatch === batch) this.openBatch = undefined;
        this.addressReplies(batch);
        const tx = this.channel.tx;
        return tx ? tx.publish(batch, (x) => this.channel.broker.checkPublishable(x)) : this.store(batch);
      },
      method,
      () => {
        if (this.openBatch === batch) this.openBatch = undefined;
        this.channel.host.backlog(1 - batch.length, -bytes());
      },
    );
    this.openBatch = batch;
  }

  /** Publishes asking for a direct reply get the channel's reply address, or fail (no reply consumer). */
  private addressReplies(batch: QueuedPublish[]): void {
    for (const item of batch) {
      if (!item.directReply || item.error !== undefined) continue;
      try {
        const content = item.publish.content;
        content.properties = withReplyTo(content.properties, this.channel.replyAddress());
      } catch (e) {
        item.error = e;
      }
    }
  }

  /**
   * A reply to a direct reply-to address goes straight to the requester's channel, never
   * stored; to an address no channel consumes, it is dropped (returned if mandatory).
   */
  private reply(item: QueuedPublish): void {
    if (item.error !== undefined) throw item.error;
    const { content } = item.publish;
    const target = this.channel.replyTarget(content.routingKey);
    target?.deliverReply(content);
    const frames = !target && item.mandatory ? this.returned(content) : [];
    if (item.seq)
      frames.push(methodFrame(this.channel.number, 'basic.ack', { deliveryTag: item.seq, multiple: false }));
    if (frames.length) this.channel.host.write(frames);
  }

  /** basic.return 312 NO_ROUTE with the message, for a mandatory publish that reached no queue. */
  private returned(content: Publish['content']): Buffer[] {
    const n = this.channel.number;
    return [
      methodFrame(n, 'basic.return', {
        replyCode: CODES.NO_ROUTE,
        replyText: 'NO_ROUTE',
        exchange: content.exchange,
        routingKey: content.routingKey,
      }),
      ...contentFrames(n, content.properties, content.body, this.channel.host.frameMax),
    ];
  }

  /**
   * Stores a batch in one call, then answers in order: returns for unroutable mandatory
   * publishes, and confirms as RabbitMQ sends them, one basic.ack with multiple=true for
   * each run of stored messages, a basic.nack for each refused one (which ends a run).
   */
  async store(batch: QueuedPublish[]): Promise<void> {
    const bad = batch.findIndex((it) => it.error !== undefined);
    const good = bad < 0 ? batch : batch.slice(0, bad);
    const { results, error } = await this.channel.broker.publish(good.map((it) => it.publish));
    const frames: Buffer[] = [];
    const n = this.channel.number;
    let run: { first: number; last: number } | undefined;
    const endRun = () => {
      if (run) frames.push(methodFrame(n, 'basic.ack', { deliveryTag: run.last, multiple: run.last > run.first }));
      run = undefined;
    };
    results.forEach((r, k) => {
      const {
        seq,
        mandatory,
        publish: { content },
      } = good[k]!;
      if (mandatory && r.routed === 0 && !r.refused) frames.push(...this.returned(content));
      if (!seq) return;
      if (!r.refused) {
        run = { first: run?.first ?? seq, last: seq };
        return;
      }
      endRun();
      frames.push(methodFrame(n, 'basic.nack', { deliveryTag: seq, multiple: false }));
    });
    endRun();
    if (frames.length) this.channel.host.write(frames);
    const err = error ?? (bad < 0 ? undefined : batch[bad]!.error);
    if (err) throw err;
  }
}

/** The `expiration` property: milliseconds as a decimal string (RabbitMQ refuses anything else). */
function parseExpiration(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw amqpErrors.precondition(`invalid expiration '${v}' for message`);
  return Number(v);
}

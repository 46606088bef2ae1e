import type { AmqpBroker } from '../../engine/amqp/broker.js';
import type { Publish } from '../../engine/amqp/publish.js';
import { routeOf, type Address } from './address.js';
import { toPublish } from './convert.js';
import { Amqp10Error, conditionOf, errorValue } from './errors.js';
import { CODE, composite } from './frames.js';
import { decodeMessage, PROPS } from './message.js';
import { textOf, type Value } from './types.js';

/** Credit the server grants a sending client (RabbitMQ 4's default is 128 too). */
const LINK_CREDIT = 128;
/** Largest message accepted, all sections: Redrive's largest message. */
export const MAX_MESSAGE_SIZE = 1_048_576;
/** Most publishes stored together. */
const BATCH = 100;

/** What a receiving link needs of its session. */
export interface IncomingHost {
  readonly broker: AmqpBroker;
  /** Settles a delivery with its outcome (when the client sent it unsettled). */
  settle(deliveryId: number, outcome: Value): void;
  /** Tops the link's credit up again. */
  sendFlow(link: IncomingLink): void;
  /** Bytes of messages still arriving in frames, taken or (negative) given back; throws over a limit. */
  holdBytes(delta: number): void;
  /** Bytes of complete messages waiting to be stored, taken or given back (the memory alarm's count). */
  queued(delta: number): void;
  /** Whether the memory alarm is on: no credit is given while it is. */
  readonly alarm: boolean;
}

interface Pending {
  deliveryId: number;
  bytes: number;
  settled: boolean;
  publish?: Publish;
  /** Refused before storing (a bad message or address): the rejected outcome. */
  error?: unknown;
}

/**
 * A link on which the client publishes: transfers (possibly in several frames) become
 * publishes to the target's exchange and routing key, stored in order, in batches, and
 * settled with RabbitMQ 4's outcomes: accepted once stored, released when no queue took
 * the message, rejected when it cannot be routed or a queue refused it.
 */
export class IncomingLink {
  credit = LINK_CREDIT;
  deliveryCount = 0;
  private partial?: { deliveryId: number; settled: boolean; chunks: Buffer[]; bytes: number };
  private queue: Pending[] = [];
  private running = false;
  closed = false;
  /** Credit was due while the memory alarm was on: given when it clears. */
  starved = false;

  constructor(
    readonly handle: number,
    readonly name: string,
    /** Undefined for the null target: each message's `to` says where it goes. */
    readonly target: Address | undefined,
    private readonly host: IncomingHost,
  ) {}

  /** One transfer frame of this link. */
  transfer(deliveryId: number | undefined, settled: boolean, more: boolean, aborted: boolean, payload: Buffer): void {
    let p = this.partial;
    if (!p) {
      if (deliveryId === undefined)
        throw new Amqp10Error('amqp:invalid-field', 'the first transfer of a delivery has no delivery-id');
      if (this.credit <= 0)
        throw new Amqp10Error('amqp:link:transfer-limit-exceeded', 'transfer without link credit', 'link');
      this.credit--;
      this.deliveryCount = (this.deliveryCount + 1) >>> 0;
      p = this.partial = { deliveryId, settled, chunks: [], bytes: 0 };
    }
    p.settled ||= settled;
    if (p.bytes + payload.length > MAX_MESSAGE_SIZE) {
      this.dropPartial();
      throw new Amqp10Error(
        'amqp:link:message-size-exceeded',
        `message size exceeds the maximum of ${MAX_MESSAGE_SIZE} bytes`,
        'link',
      );
    }
    this.host.holdBytes(payload.length);
    p.bytes += payload.length;
    p.chunks.push(payload);
    if (aborted) return this.dropPartial();
    if (more) return;
    const whole = Buffer.concat(p.chunks);
    this.dropPartial();
    this.host.queued(whole.length);
    this.queue.push(this.prepare(p.deliveryId, p.settled, whole));
    void this.drain();
  }

  /** Gives back what an unfinished delivery holds. */
  dropPartial(): void {
    if (!this.partial) return;
    this.host.holdBytes(-this.partial.bytes);
    this.partial = undefined;
  }

  private prepare(deliveryId: number, settled: boolean, payload: Buffer): Pending {
    const bytes = payload.length;
    try {
      const m = decodeMessage(payload);
      const to = textOf(m.properties?.[PROPS.to]);
      const subject = textOf(m.properties?.[PROPS.subject]);
      const { exchange, routingKey } = routeOf(this.target, to, subject);
      return { deliveryId, bytes, settled, publish: toPublish(m, exchange, routingKey) };
    } catch (error) {
      return { deliveryId, bytes, settled, error };
    }
  }

  /** Stores what is waiting, in order and in batches, and settles each. */
  private async drain(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      while (this.queue.length && !this.closed) {
        const head = this.queue[0]!;
        if (head.error !== undefined) {
          this.queue.shift();
          this.outcome(head, rejected(head.error));
          continue;
        }
        let n = 0;
        while (n < this.queue.length && n < BATCH && this.queue[n]!.publish) n++;
        const batch = this.queue.splice(0, n);
        const { results, error } = await this.host.broker.publish(batch.map((b) => b.publish!));
        results.forEach((r, i) => {
          if (r.refused) this.outcome(batch[i]!, rejected(QUEUE_FULL));
          else this.outcome(batch[i]!, r.routed > 0 ? accepted() : released());
        });
        // A publish that failed (its exchange is gone) ends the batch; those after it go again.
        if (error !== undefined) {
          this.outcome(batch[results.length]!, rejected(error));
          this.queue.unshift(...batch.slice(results.length + 1));
        }
        this.topUp();
      }
    } finally {
      this.running = false;
    }
  }

  /**
   * Credit again once half is used and what came is stored; none while the memory alarm
   * is on (RabbitMQ 4 stops granting credit then), so publishers wait.
   */
  topUp(): void {
    if (this.closed || this.credit >= LINK_CREDIT / 2) return;
    this.starved = this.host.alarm;
    if (this.starved) return;
    this.credit = LINK_CREDIT;
    this.host.sendFlow(this);
  }

  /** Gives back what waiting publishes hold (the link is gone). */
  dropQueued(): void {
    for (const p of this.queue.splice(0)) this.host.queued(-p.bytes);
  }

  private outcome(p: Pending, state: Value): void {
    this.host.queued(-p.bytes);
    if (!p.settled && !this.closed) this.host.settle(p.deliveryId, state);
  }
}

const QUEUE_FULL = { condition: 'amqp:precondition-failed', description: 'the queue is full' };
const accepted = () => composite(CODE.accepted, []);
const released = () => composite(CODE.released, []);
function rejected(e: unknown): Value {
  const c =
    e && typeof e === 'object' && 'condition' in e ? (e as { condition: string; description: string }) : conditionOf(e);
  return composite(CODE.rejected, [errorValue(c)]);
}

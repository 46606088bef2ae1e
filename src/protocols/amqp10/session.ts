import type { AmqpBroker, Delivery } from '../../engine/amqp/broker.js';
import type { QueueRecord } from '../../engine/kernel/types.js';
import type { AmqpRegistry } from '../amqp/registry.js';
import { parseAddress, type Address } from './address.js';
import { toMessage } from './convert.js';
import { Amqp10Error, conditionOf, errorValue } from './errors.js';
import { CODE, composite, compositeOf, field, frame, FRAME_AMQP, type Composite } from './frames.js';
import { IncomingLink } from './incoming-link.js';
import { encodeMessage } from './message.js';
import { OutgoingLink } from './outgoing-link.js';
import { Settlements } from './outcomes.js';
import { attachReply, transferFrames, withoutFilter } from './performatives.js';
import { boolOf, numberOf, textOf, v, type Value } from './types.js';

/** Links one session may have attached at once (handle-max + 1). */
const MAX_LINKS = 256;
/** Transfer frames the server takes before it opens its window again. */
const INCOMING_WINDOW = 4096;

/** What a session needs of its connection. */
export interface SessionHost {
  readonly broker: AmqpBroker;
  readonly registry: AmqpRegistry;
  readonly connectionId: number;
  /** The peer's max-frame-size. */
  readonly peerMaxFrame: number;
  write(frames: Buffer[]): void;
  /** Outgoing deliveries the connection may send now (its socket's back-pressure, the unsettled bound). */
  sendRoom(): number;
  unsettledChanged(delta: number): void;
  roomChanged(): Promise<void>;
  holdBytes(delta: number): void;
  queued(delta: number): void;
  readonly alarm: boolean;
  log: { warn(obj: object, msg?: string): void };
}

/** An attach from the peer, with the fields both kinds of link read. */
interface AttachRequest {
  p: Composite;
  name: string;
  handle: number;
  source?: Value;
  target?: Value;
}

interface Unsettled {
  link: OutgoingLink;
  delivery: Delivery;
}

/**
 * One session (begin to end): its windows, its links by handle, and the deliveries it
 * sent that are not settled yet (by delivery-id), which dispositions settle.
 */
export class Session {
  private readonly links = new Map<number, OutgoingLink | IncomingLink>();
  private readonly unsettled = new Map<number, Unsettled>();
  /** Handles the server detached (a refusal, an error) whose detach from the peer is still to come. */
  private readonly detaching = new Set<number>();
  private nextOutgoingId = 0;
  private nextDeliveryId = 0;
  private remoteIncomingWindow: number;
  private nextIncomingId: number;
  private incomingLeft = INCOMING_WINDOW;
  private readonly settlements: Settlements;
  ended = false;

  constructor(
    readonly channel: number,
    readonly remoteChannel: number,
    begin: Composite,
    private readonly host: SessionHost,
  ) {
    this.settlements = new Settlements(host.broker, (e) =>
      host.log.warn({ err: (e as Error).message }, 'AMQP 1.0 settlement failed'),
    );
    this.nextIncomingId = numberOf(field(begin, 1)) ?? 0;
    this.remoteIncomingWindow = numberOf(field(begin, 2)) ?? 0;
    host.write([
      frame(
        FRAME_AMQP,
        channel,
        composite(CODE.begin, [
          v.ushort(remoteChannel),
          v.uint(0),
          v.uint(INCOMING_WINDOW),
          v.uint(0x7fffffff),
          v.uint(MAX_LINKS - 1),
        ]),
      ),
    ]);
  }

  get broker(): AmqpBroker {
    return this.host.broker;
  }

  private send(performative: Value, payload?: Buffer): void {
    this.host.write([frame(FRAME_AMQP, this.channel, performative, payload)]);
  }

  /** A performative on this session's channel. */
  async handle(p: Composite, payload: Buffer): Promise<void> {
    switch (p.code) {
      case CODE.attach:
        return this.attach(p);
      case CODE.flow:
        return this.flow(p);
      case CODE.transfer:
        return this.transfer(p, payload);
      case CODE.disposition:
        return this.disposition(p);
      case CODE.detach:
        return this.detach(p);
      default:
        throw new Amqp10Error('amqp:not-allowed', `performative 0x${p.code.toString(16)} on a session`);
    }
  }

  /** The link a performative names: its handle is field 0 (field 4 of a flow). */
  private linkOf(p: Composite, at = 0): OutgoingLink | IncomingLink {
    const handle = numberOf(field(p, at));
    const link = handle === undefined ? undefined : this.links.get(handle);
    if (!link) throw new Amqp10Error('amqp:session:unattached-handle', `no link with handle ${handle}`, 'session');
    return link;
  }

  private async attach(p: Composite): Promise<void> {
    const name = textOf(field(p, 0)) ?? '';
    const handle = numberOf(field(p, 1));
    if (handle === undefined || handle >= MAX_LINKS)
      throw new Amqp10Error('amqp:session:handle-max-exceeded', `handle ${handle} is over ${MAX_LINKS - 1}`, 'session');
    if (this.links.has(handle) || this.detaching.has(handle))
      throw new Amqp10Error('amqp:session:handle-in-use', `handle ${handle} is in use`, 'session');
    const clientReceives = boolOf(field(p, 2)) === true;
    const source = field(p, 5);
    const target = field(p, 6);
    try {
      const request = { p, name, handle, source, target };
      if (clientReceives) await this.attachOutgoing(request);
      else await this.attachIncoming(request);
    } catch (e) {
      if (!(e instanceof Error) || e.name === 'Error') this.host.log.warn({ err: String(e) }, 'AMQP 1.0 attach failed');
      // The spec's refusal: an attach without the terminus, then a detach with the error.
      this.send(
        composite(CODE.attach, [v.string(name), v.uint(handle), v.bool(!clientReceives), undefined, undefined]),
      );
      this.send(composite(CODE.detach, [v.uint(handle), v.bool(true), errorValue(conditionOf(e))]));
      this.detaching.add(handle);
    }
  }

  private async attachOutgoing({ p, name, handle, source, target }: AttachRequest): Promise<void> {
    const address = textOf(field(compositeOf(source), 0));
    if (address === undefined) throw new Amqp10Error('amqp:invalid-field', 'a source address is required');
    const a = parseAddress(address);
    if (a.kind !== 'queue')
      throw new Amqp10Error('amqp:invalid-field', `the source address must be /queues/:queue, not '${address}'`);
    const queue = await this.broker.queue(a.queue);
    // The session may have ended while the queue was read: no link then.
    if (this.ended) return;
    this.host.registry.checkOwner(queue.id, queue.name, this.host.connectionId);
    const settled = numberOf(field(p, 3)) === 1;
    const link = new OutgoingLink(handle, name, queue, settled, this.outgoingHost());
    this.host.registry.addConsumer(queue.id, queue.name, link);
    this.links.set(handle, link);
    this.send(attachReply(name, handle, 'sender', { settled, source: withoutFilter(source), target }));
    link.start();
  }

  private async attachIncoming({ p, name, handle, source, target }: AttachRequest): Promise<void> {
    const t = compositeOf(target);
    if (t?.code === CODE.coordinator)
      throw new Amqp10Error('amqp:not-implemented', 'Transactions are not supported', 'link');
    let address: Address | undefined;
    const text = textOf(field(t, 0));
    if (text !== undefined) {
      address = parseAddress(text);
      if (address.kind === 'queue') await this.broker.queue(address.queue);
      else await this.broker.exchanges.existing(address.exchange);
    }
    if (this.ended) return;
    const link = new IncomingLink(handle, name, address, this.incomingHost());
    this.links.set(handle, link);
    link.deliveryCount = numberOf(field(p, 9)) ?? 0;
    this.send(attachReply(name, handle, 'receiver', { sndSettleMode: field(p, 3), source, target }));
    this.sendIncomingFlow(link);
  }

  private flow(p: Composite): void {
    const nextIncoming = numberOf(field(p, 0));
    const window = numberOf(field(p, 1)) ?? 0;
    // The peer's window, counted from our next-outgoing-id (the spec's formula).
    this.remoteIncomingWindow = Math.max(0, (nextIncoming ?? 0) + window - this.nextOutgoingId);
    if (field(p, 4) === undefined) {
      this.wakeLinks();
      if (boolOf(field(p, 9))) this.sendSessionFlow();
      return;
    }
    const link = this.linkOf(p, 4);
    if (link instanceof OutgoingLink) {
      link.flow(numberOf(field(p, 5)), numberOf(field(p, 6)) ?? 0, boolOf(field(p, 8)) === true);
      if (boolOf(field(p, 9))) this.sendLinkFlow(link, link.deliveryCount, link.credit, link.drain);
    } else if (boolOf(field(p, 9))) this.sendIncomingFlow(link);
    this.wakeLinks();
  }

  private wakeLinks(): void {
    for (const l of this.links.values()) if (l instanceof OutgoingLink) l.wake();
  }

  private transfer(p: Composite, payload: Buffer): void {
    this.nextIncomingId = (this.nextIncomingId + 1) >>> 0;
    if (--this.incomingLeft < INCOMING_WINDOW / 2) {
      this.incomingLeft = INCOMING_WINDOW;
      this.sendSessionFlow();
    }
    const link = this.linkOf(p);
    if (!(link instanceof IncomingLink))
      throw new Amqp10Error('amqp:session:errant-link', 'a transfer on a link the server sends on', 'session');
    try {
      link.transfer(
        numberOf(field(p, 1)),
        boolOf(field(p, 4)) === true,
        boolOf(field(p, 5)) === true,
        boolOf(field(p, 9)) === true,
        payload,
      );
    } catch (e) {
      if (e instanceof Amqp10Error && e.scope === 'link') return this.closeLink(link, e);
      throw e;
    }
  }

  private disposition(p: Composite): void {
    // Dispositions from the peer as sender concern its own transfers, which the server settles at once.
    if (boolOf(field(p, 0)) !== true) return;
    const first = numberOf(field(p, 1));
    if (first === undefined) throw new Amqp10Error('amqp:invalid-field', 'a disposition without first');
    const last = numberOf(field(p, 2)) ?? first;
    const peerSettled = boolOf(field(p, 3)) === true;
    const state = compositeOf(field(p, 4));
    const picked: Unsettled[] = [];
    // The range may be huge: the unsettled map is what is walked.
    for (const [id, u] of this.unsettled) {
      if (id < first || id > last) continue;
      if (!peerSettled && state?.code === CODE.received) continue;
      this.unsettled.delete(id);
      picked.push(u);
    }
    if (!picked.length) return;
    this.host.unsettledChanged(-picked.length);
    const deliveries = picked.map((u) => u.delivery);
    this.settlements.add(deliveries, state);
    if (!peerSettled)
      this.send(composite(CODE.disposition, [v.bool(false), v.uint(first), v.uint(last), v.bool(true), field(p, 4)]));
  }

  private detach(p: Composite): void {
    const handle = numberOf(field(p, 0));
    if (handle !== undefined && this.detaching.delete(handle)) return;
    const link = this.linkOf(p);
    this.release(link);
    this.send(composite(CODE.detach, [v.uint(link.handle), v.bool(true)]));
  }

  /** Closes a link from the server's side with an error. */
  private closeLink(link: OutgoingLink | IncomingLink, e: unknown): void {
    if (!this.links.has(link.handle)) return;
    this.release(link);
    this.send(composite(CODE.detach, [v.uint(link.handle), v.bool(true), errorValue(conditionOf(e))]));
    this.detaching.add(link.handle);
  }

  /** A link goes: a sending link stops and its unsettled deliveries go back to their queue. */
  private release(link: OutgoingLink | IncomingLink): void {
    this.links.delete(link.handle);
    if (link instanceof IncomingLink) {
      link.closed = true;
      link.dropPartial();
      link.dropQueued();
      return;
    }
    link.stop();
    this.host.registry.removeConsumer(link.queue.id, link);
    const back: Delivery[] = [];
    for (const [id, u] of this.unsettled) {
      if (u.link !== link) continue;
      this.unsettled.delete(id);
      back.push(u.delivery);
    }
    this.giveBack(link.queue, back);
  }

  private giveBack(queue: QueueRecord, deliveries: Delivery[]): void {
    if (!deliveries.length) return;
    this.host.unsettledChanged(-deliveries.length);
    this.broker.requeue(queue, deliveries, false).catch(() => undefined);
  }

  get linkCount(): number {
    return this.links.size;
  }

  /** The links on which the server sends, with how many of their deliveries are unsettled (the management API's consumers). */
  sendingLinks(): { link: OutgoingLink; unsettled: number }[] {
    const out = new Map<OutgoingLink, number>();
    for (const l of this.links.values()) if (l instanceof OutgoingLink) out.set(l, 0);
    for (const u of this.unsettled.values()) if (out.has(u.link)) out.set(u.link, out.get(u.link)! + 1);
    return [...out].map(([link, unsettled]) => ({ link, unsettled }));
  }

  /** The memory alarm cleared: links that were owed credit get it. */
  alarmCleared(): void {
    for (const l of this.links.values()) if (l instanceof IncomingLink && l.starved) l.topUp();
  }

  /** The session ends (end, close, or the socket is gone): every link goes. */
  end(): void {
    this.ended = true;
    for (const l of [...this.links.values()]) this.release(l);
  }

  private sendSessionFlow(): void {
    this.send(this.sessionFlow([]));
  }

  private sessionFlow(linkFields: (Value | undefined)[]): Value {
    return composite(CODE.flow, [
      v.uint(this.nextIncomingId),
      v.uint(this.incomingLeft),
      v.uint(this.nextOutgoingId),
      v.uint(0x7fffffff),
      ...linkFields,
    ]);
  }

  private sendLinkFlow(link: OutgoingLink | IncomingLink, deliveryCount: number, credit: number, drain: boolean): void {
    this.send(this.sessionFlow([v.uint(link.handle), v.uint(deliveryCount), v.uint(credit), undefined, v.bool(drain)]));
  }

  private sendIncomingFlow(link: IncomingLink): void {
    this.sendLinkFlow(link, link.deliveryCount, link.credit, false);
  }

  private incomingHost() {
    const host = this.host;
    return {
      broker: this.broker,
      settle: (deliveryId: number, outcome: Value) =>
        this.send(composite(CODE.disposition, [v.bool(true), v.uint(deliveryId), undefined, v.bool(true), outcome])),
      sendFlow: (link: IncomingLink) => this.sendIncomingFlow(link),
      holdBytes: (delta: number) => this.host.holdBytes(delta),
      queued: (delta: number) => this.host.queued(delta),
      get alarm() {
        return host.alarm;
      },
    };
  }

  private outgoingHost() {
    return {
      broker: this.broker,
      room: () => Math.min(this.remoteIncomingWindow, this.host.sendRoom()),
      roomChanged: () => this.host.roomChanged(),
      deliver: (link: OutgoingLink, d: Delivery) => this.deliver(link, d),
      sendFlow: (link: OutgoingLink, drain: boolean) => this.sendLinkFlow(link, link.deliveryCount, link.credit, drain),
      queueDeleted: (link: OutgoingLink) =>
        this.closeLink(
          link,
          new Amqp10Error('amqp:resource-deleted', `queue '${link.queue.name}' in vhost '/' was deleted`),
        ),
      failed: (link: OutgoingLink, err: unknown) => this.closeLink(link, err),
    };
  }

  /** Sends one message on a link, in as many transfer frames as the peer's max-frame-size needs. */
  private deliver(link: OutgoingLink, d: Delivery): void {
    if (!this.links.has(link.handle)) {
      this.broker.requeue(d.queue, [d], false).catch(() => undefined);
      return;
    }
    const id = this.nextDeliveryId;
    this.nextDeliveryId = (id + 1) >>> 0;
    link.sent();
    const payload = encodeMessage(toMessage(d));
    const frames = transferFrames(this.channel, link.handle, id, link.settled, payload, this.host.peerMaxFrame);
    this.nextOutgoingId = (this.nextOutgoingId + frames.length) >>> 0;
    this.remoteIncomingWindow -= frames.length;
    this.host.write(frames);
    if (link.settled) {
      this.broker.ack(d.queue, [d]).catch(() => undefined);
      return;
    }
    this.unsettled.set(id, { link, delivery: d });
    this.host.unsettledChanged(1);
  }
}

import type { AmqpBroker } from '../../engine/amqp/broker.js';
import { amqpErrors } from '../../engine/kernel/amqp-errors.js';
import { deliveredProperties } from './death-headers.js';
import { contentFrames, methodFrame } from './frames.js';
import type { Holdings } from './limits.js';
import { queueNamed } from './queue-methods.js';
import type { AmqpRegistry } from './registry.js';
import type { Args, MethodName } from './spec.js';
import { settleOnly, type Unacked } from './unacked.js';

/** What basic.get needs of its channel (channel.ts implements it). */
export interface GetChannel {
  readonly number: number;
  lastDeclared: string;
  readonly broker: AmqpBroker;
  readonly host: {
    readonly id: number;
    readonly registry: AmqpRegistry;
    readonly holdings: Holdings;
    readonly frameMax: number;
    write(frames: Buffer[]): void;
  };
  readonly unacked: Map<bigint, Unacked>;
  nextDeliveryTag(): bigint;
  send(name: MethodName, args?: Args): void;
}

/** basic.get: one message, or get-empty; acknowledged at once with no-ack. */
export async function basicGet(ch: GetChannel, a: Args): Promise<void> {
  const queue = await ch.broker.queue(queueNamed(ch, a.queue));
  ch.host.registry.checkOwner(queue.id, queue.name, ch.host.id);
  if (!a.noAck && ch.host.holdings.unackedRoom() <= 0) {
    throw amqpErrors.precondition('too many unacknowledged messages on this connection: acknowledge some first');
  }
  ch.host.registry.touch(queue.id);
  const [d] = await ch.broker.receive(queue, 1, 0);
  if (!d) {
    ch.send('basic.get-empty');
    return;
  }
  const tag = ch.nextDeliveryTag();
  if (a.noAck) await ch.broker.ack(queue, [d]);
  else ch.unacked.set(tag, { delivery: settleOnly(d) });
  const messageCount = await ch.broker.messageCount(queue);
  ch.host.write([
    methodFrame(ch.number, 'basic.get-ok', {
      deliveryTag: tag,
      redelivered: d.redelivered,
      exchange: d.content.exchange,
      routingKey: d.content.routingKey,
      messageCount,
    }),
    ...contentFrames(ch.number, deliveredProperties(d.content), d.content.body, ch.host.frameMax),
  ]);
}

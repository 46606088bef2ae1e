import { AmqpBroker } from '../../engine/amqp/broker.js';
import { AmqpError, CODES } from '../../engine/kernel/amqp-errors.js';
import { plainTable, type FieldTable } from './codec.js';
import { REPLY_QUEUE } from './direct-reply.js';
import type { AmqpRegistry } from './registry.js';
import type { Args, Method, MethodName } from './spec.js';

/** What these methods need of their channel (channel.ts implements it). */
export interface QueueMethodHost {
  readonly number: number;
  /** The queue this channel declared last: the empty queue name stands for it, as in RabbitMQ. */
  lastDeclared: string;
  readonly broker: AmqpBroker;
  readonly host: { readonly id: number; readonly registry: AmqpRegistry };
  send(name: MethodName, args?: Args): void;
}

const args = (t: unknown) => plainTable((t as FieldTable | undefined) ?? new Map());

/** The queue a method names: `""` is the channel's most recently declared queue (RabbitMQ's shortcut). */
export function queueNamed(ch: Pick<QueueMethodHost, 'lastDeclared'>, name: unknown): string {
  const n = String(name);
  if (n !== '') return n;
  if (ch.lastDeclared === '') throw new AmqpError(CODES.NOT_FOUND, 'no previously declared queue');
  return ch.lastDeclared;
}

/** The exchange and queue class methods of a channel (declare, bind, purge, delete). */
export async function handleQueueMethod(ch: QueueMethodHost, m: Method): Promise<void> {
  const a = m.args;
  const broker = ch.broker;
  const registry = ch.host.registry;
  const reply = (name: MethodName, out?: Args) => {
    if (!a.noWait) ch.send(name, out);
  };
  switch (m.name) {
    case 'exchange.declare':
      await broker.exchanges.declare({
        name: String(a.exchange),
        type: String(a.type),
        passive: Boolean(a.passive),
        durable: Boolean(a.durable),
        autoDelete: Boolean(a.autoDelete),
        internal: Boolean(a.internal),
        arguments: args(a.arguments),
      });
      return reply('exchange.declare-ok');
    case 'exchange.delete':
      await broker.exchanges.delete(String(a.exchange), Boolean(a.ifUnused));
      return reply('exchange.delete-ok');
    case 'exchange.bind':
    case 'exchange.unbind':
      await broker.bindExchange(
        String(a.destination),
        String(a.source),
        String(a.routingKey),
        args(a.arguments),
        m.name === 'exchange.bind',
      );
      return reply(m.name === 'exchange.bind' ? 'exchange.bind-ok' : 'exchange.unbind-ok');
    case 'queue.declare': {
      const name = String(a.queue) || AmqpBroker.generatedName();
      const passive = Boolean(a.passive);
      // The direct reply-to pseudo-queue is always there, as RabbitMQ answers for it.
      if (passive && name === REPLY_QUEUE)
        return reply('queue.declare-ok', { queue: name, messageCount: 0, consumerCount: 1 });
      const existing = await broker.queue(name).catch(() => undefined);
      if (existing) registry.checkOwner(existing.id, name, ch.host.id);
      const { queue, record, messageCount } = await broker.declareQueue({
        name,
        passive,
        durable: Boolean(a.durable),
        exclusive: Boolean(a.exclusive),
        autoDelete: Boolean(a.autoDelete),
        arguments: args(a.arguments),
      });
      if (!passive && a.exclusive) registry.setOwner(queue.id, ch.host.id);
      ch.lastDeclared = name;
      // A declaration uses the queue: its x-expires period starts again.
      const expires = record?.arguments['x-expires'];
      if (typeof expires === 'number')
        registry.armExpiry({ queueId: queue.id, accountId: broker.accountId, name, expiresMs: expires });
      return reply('queue.declare-ok', { queue: name, messageCount, consumerCount: registry.consumerCount(queue.id) });
    }
    case 'queue.bind':
    case 'queue.unbind': {
      const name = queueNamed(ch, a.queue);
      await checkedQueue(ch, name);
      // With the queue name empty too, an empty routing key is the last declared queue's name.
      const key = a.queue === '' && a.routingKey === '' ? name : String(a.routingKey);
      await broker.bindQueue(name, String(a.exchange), key, args(a.arguments), m.name === 'queue.bind');
      if (m.name === 'queue.bind') return reply('queue.bind-ok');
      return ch.send('queue.unbind-ok');
    }
    case 'queue.purge': {
      const queue = await checkedQueue(ch, queueNamed(ch, a.queue));
      return reply('queue.purge-ok', { messageCount: await broker.purge(queue) });
    }
    case 'queue.delete': {
      // RabbitMQ 3.10 answers delete-ok with 0 for a queue that does not exist.
      const queue = await broker.queue(queueNamed(ch, a.queue)).catch(() => undefined);
      if (!queue) return reply('queue.delete-ok', { messageCount: 0 });
      registry.checkOwner(queue.id, queue.name, ch.host.id);
      if (a.ifUnused && registry.consumerCount(queue.id) > 0) {
        throw new AmqpError(CODES.PRECONDITION_FAILED, `queue '${queue.name}' in vhost '/' in use`);
      }
      const messageCount = await broker.deleteQueue(queue, Boolean(a.ifEmpty));
      registry.queueDeleted(queue.id);
      return reply('queue.delete-ok', { messageCount });
    }
    default:
      // A method the server only sends, or one of a connection's class on a channel.
      throw new AmqpError(
        CODES.COMMAND_INVALID,
        `unexpected method ${m.name} on channel ${ch.number}`,
        m.classId,
        m.methodId,
      );
  }
}

async function checkedQueue(ch: QueueMethodHost, name: string) {
  const queue = await ch.broker.queue(name);
  ch.host.registry.checkOwner(queue.id, name, ch.host.id);
  return queue;
}

/** An auto-delete queue goes when its last consumer does, however that consumer ended. */
export async function autoDeleteQueue(ch: QueueMethodHost, queue: { id: number; name: string }): Promise<void> {
  if (ch.host.registry.consumerCount(queue.id) > 0) return;
  const declared = await ch.broker
    .declareQueue({
      name: queue.name,
      passive: true,
      durable: false,
      exclusive: false,
      autoDelete: false,
      arguments: {},
    })
    .catch(() => undefined);
  if (declared?.record?.autoDelete && declared.queue.id === queue.id) {
    await ch.broker.deleteQueue(declared.queue, false);
    ch.host.registry.queueDeleted(declared.queue.id);
  }
}

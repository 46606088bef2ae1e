import type { BindingRecord, ExchangeRecord, AmqpQueueRecord } from '../../engine/store/exchanges.js';
import type { QueueDepth, QueueRecord } from '../../engine/kernel/types.js';
import type { WaitingReceive } from '../../engine/messages/long-poll.js';
import type { AmqpChannelView, AmqpConnectionView, AmqpConsumerView } from '../../protocols/amqp/live-view.js';
import type {
  BindingInfo,
  ChannelInfo,
  ConnectionInfo,
  ConsumerInfo,
  ExchangeInfo,
  QueueInfo,
  ReceiverInfo,
  Vhost,
} from '../../wire/broker-api.js';

/**
 * Redrive's broker state in the shapes of RabbitMQ 3.x's management HTTP API, which
 * src/wire/broker-api.ts declares for the console to read: each function maps the engine's
 * records and the AMQP listener's live views onto one of them.
 */
const VHOST: Vhost = '/';

export function connectionShape(c: AmqpConnectionView, node: string): ConnectionInfo {
  return {
    name: c.name,
    vhost: VHOST,
    user: c.user,
    node,
    state: c.state,
    type: 'network',
    protocol: c.protocol ?? 'AMQP 0-9-1',
    auth_mechanism: 'PLAIN',
    ssl: false,
    channels: c.channels.length,
    peer_host: c.peerHost,
    peer_port: c.peerPort,
    host: c.host,
    port: c.port,
    connected_at: c.connectedAt,
    client_properties: c.clientProperties,
    timeout: c.heartbeat,
    frame_max: c.frameMax,
    recv_oct: c.recvOct,
    send_oct: c.sendOct,
    user_provided_name:
      typeof c.clientProperties.connection_name === 'string' ? c.clientProperties.connection_name : undefined,
  };
}

const channelName = (c: AmqpConnectionView, ch: AmqpChannelView) => `${c.name} (${ch.number})`;

export function channelShape(c: AmqpConnectionView, ch: AmqpChannelView, node: string): ChannelInfo {
  return {
    name: channelName(c, ch),
    number: ch.number,
    vhost: VHOST,
    user: c.user,
    node,
    state: 'running',
    prefetch_count: ch.prefetchCount,
    global_prefetch_count: ch.globalPrefetchCount,
    messages_unacknowledged: ch.unacked,
    consumer_count: ch.consumers.length,
    confirm: ch.confirm,
    transactional: false,
    connection_details: { name: c.name, peer_host: c.peerHost, peer_port: c.peerPort },
  };
}

export function consumerShape(
  c: AmqpConnectionView,
  ch: AmqpChannelView,
  x: AmqpConsumerView,
  node: string,
): ConsumerInfo {
  return {
    consumer_tag: x.tag,
    channel_details: {
      connection_name: c.name,
      name: channelName(c, ch),
      node,
      number: ch.number,
      peer_host: c.peerHost,
      peer_port: c.peerPort,
      user: c.user,
    },
    queue: { name: x.queue, vhost: VHOST },
    ack_required: x.ackRequired,
    prefetch_count: x.prefetchCount,
    exclusive: x.exclusive,
    arguments: {},
    active: true,
    activity_status: 'up',
    messages_unacknowledged: x.unacked,
  };
}

export function exchangeShape(x: ExchangeRecord): ExchangeInfo {
  return {
    name: x.name,
    vhost: VHOST,
    type: x.type,
    durable: x.durable,
    auto_delete: x.autoDelete,
    internal: x.internal,
    arguments: x.arguments,
  };
}

/**
 * RabbitMQ's properties_key: the routing key (`~` for an empty one) when the binding has no
 * arguments, else `key~` and a hash of the arguments (RabbitMQ's hash differs: treat it as opaque).
 */
function propertiesKey(b: Pick<BindingRecord, 'routingKey' | 'arguments'>): string {
  const args = JSON.stringify(b.arguments ?? {});
  if (args === '{}') return b.routingKey === '' ? '~' : b.routingKey;
  let h = 0;
  for (let i = 0; i < args.length; i++) h = (Math.imul(h, 31) + args.charCodeAt(i)) | 0;
  return `${b.routingKey}~${(h >>> 0).toString(36)}`;
}

export function bindingShape(b: BindingRecord): BindingInfo {
  return {
    source: b.source,
    vhost: VHOST,
    destination: b.destination,
    destination_type: b.destinationKind,
    routing_key: b.routingKey,
    arguments: b.arguments,
    properties_key: propertiesKey(b),
  };
}

export interface QueueFacts {
  queue: QueueRecord;
  depth?: QueueDepth;
  /** How it was declared over AMQP; a queue made over SQS has none (durable, not exclusive). */
  amqp?: AmqpQueueRecord;
  consumers: number;
}

export function queueShape(f: QueueFacts, node: string): QueueInfo {
  const d = f.depth ?? { visible: 0, inflight: 0, delayed: 0, groupsInflight: 0 };
  return {
    name: f.queue.name,
    vhost: VHOST,
    durable: f.amqp?.durable ?? true,
    auto_delete: f.amqp?.autoDelete ?? false,
    exclusive: f.amqp?.exclusive ?? false,
    arguments: f.amqp?.arguments ?? {},
    node,
    state: 'running',
    type: 'classic',
    messages: d.visible + d.inflight + d.delayed,
    messages_ready: d.visible,
    messages_unacknowledged: d.inflight,
    messages_delayed: d.delayed,
    consumers: f.consumers,
    redrive: { fifo: f.queue.fifo, declared_over_amqp: f.amqp !== undefined, created_at: f.queue.createdAt },
  };
}

export function receiverShape(w: WaitingReceive): ReceiverInfo {
  return { peer_host: w.client ?? null, waiting_since: w.since, wait_ends_at: w.deadline };
}

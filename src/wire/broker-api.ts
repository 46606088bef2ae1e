/**
 * The management API's answers as clients read them: RabbitMQ 3.x's shapes, field for field
 * where the two overlap (docs/amqp.md#the-broker-at-a-glance), plus Redrive's extensions
 * (`messages_delayed`, `redrive`, the long polls waiting on a queue, the SQS clients). The
 * server builds them (src/server/management/rabbit-shapes.ts) and the console's pages read
 * them, so a field renamed on one side is a compile error on the other. An account is the
 * virtual host `/`; `node` is the server's node id. Fields RabbitMQ has and Redrive does not
 * keep (rates, garbage collection, memory) are left out rather than made up.
 */

/** Redrive's one virtual host: each account is its own broker. */
export type Vhost = '/';

/** The `name (channel number)` RabbitMQ gives a channel, and where it runs. */
interface ChannelDetails {
  connection_name: string;
  name: string;
  node: string;
  number: number;
  peer_host: string;
  peer_port: number;
  user: string;
}

export interface ConnectionInfo {
  /** `peer_host:peer_port -> host:port`. */
  name: string;
  vhost: Vhost;
  user: string;
  node: string;
  /** `starting`, `tuning`, `opening`, `running`, `closing` or `closed`. */
  state: string;
  type: 'network';
  protocol: 'AMQP 0-9-1' | 'AMQP 1-0';
  auth_mechanism: 'PLAIN';
  ssl: false;
  /** How many channels are open. */
  channels: number;
  peer_host: string;
  peer_port: number;
  host: string;
  port: number;
  connected_at: number;
  client_properties: Record<string, unknown>;
  /** The heartbeat agreed, in seconds. */
  timeout: number;
  frame_max: number;
  recv_oct: number;
  send_oct: number;
  /** The client's `connection_name` property, when it gave one. */
  user_provided_name?: string;
}

export interface ChannelInfo {
  name: string;
  number: number;
  vhost: Vhost;
  user: string;
  node: string;
  state: 'running';
  prefetch_count: number;
  global_prefetch_count: number;
  messages_unacknowledged: number;
  consumer_count: number;
  confirm: boolean;
  transactional: false;
  connection_details: { name: string; peer_host: string; peer_port: number };
}

/** RabbitMQ's consumer, plus `messages_unacknowledged` (the consumer's own, which RabbitMQ shows per channel only). */
export interface ConsumerInfo {
  consumer_tag: string;
  channel_details: ChannelDetails;
  queue: { name: string; vhost: Vhost };
  ack_required: boolean;
  prefetch_count: number;
  exclusive: boolean;
  arguments: Record<string, unknown>;
  active: true;
  activity_status: 'up';
  messages_unacknowledged: number;
}

export interface ExchangeInfo {
  name: string;
  vhost: Vhost;
  /** `direct`, `fanout`, `topic` or `headers`. */
  type: string;
  durable: boolean;
  auto_delete: boolean;
  internal: boolean;
  arguments: Record<string, unknown>;
}

export interface BindingInfo {
  source: string;
  vhost: Vhost;
  destination: string;
  destination_type: 'queue' | 'exchange';
  routing_key: string;
  arguments: Record<string, unknown>;
  /** The binding's name among those of its source and destination; opaque when it has arguments. */
  properties_key: string;
}

/**
 * RabbitMQ's queue. `messages_unacknowledged` is what is in flight (received over SQS or
 * delivered over AMQP); delayed messages count in `messages` only, as Redrive's extension
 * `messages_delayed`. `redrive` tells the SQS side: FIFO, how it was made, when.
 */
export interface QueueInfo {
  name: string;
  vhost: Vhost;
  durable: boolean;
  auto_delete: boolean;
  exclusive: boolean;
  arguments: Record<string, unknown>;
  node: string;
  state: 'running';
  type: 'classic';
  messages: number;
  messages_ready: number;
  messages_unacknowledged: number;
  messages_delayed: number;
  consumers: number;
  redrive: { fifo: boolean; declared_over_amqp: boolean; created_at: number };
}

/** Redrive's extension on one queue: an SQS long poll waiting on it now. */
export interface ReceiverInfo {
  /** The client's address; null when the request came without one (the library). */
  peer_host: string | null;
  waiting_since: number;
  wait_ends_at: number;
}

/** `GET /api/queues/%2F/<name>`: the queue, its consumers and its waiting long polls. */
export interface QueueDetail extends QueueInfo {
  consumer_details: ConsumerInfo[];
  long_poll_receivers: ReceiverInfo[];
}

/** Redrive's `GET /api/sqs-clients`: SQS requests per access key. */
export interface SqsClientInfo {
  access_key: string;
  /** The address the last request came from. */
  peer_host: string;
  first_seen: number;
  last_seen: number;
  /** Requests since the key was first tracked (or since it was last evicted). */
  requests: number;
  /** Requests in the last 60 seconds. */
  requests_last_minute: number;
  /** Their mean rate per second over that minute. */
  rate: number;
}

/** `GET /api/overview`: counts only (the totals of messages would read every queue's depth). */
export interface Overview {
  management_version: 'redrive';
  product_name: 'Redrive';
  cluster_name: string;
  node: string;
  object_totals: { connections: number; channels: number; consumers: number; queues: number };
}

/** A listing asked with `page`: RabbitMQ's paged object (without `page`, the plain array). */
export interface ListPage<T> {
  filtered_count: number;
  item_count: number;
  items: T[];
  page: number;
  page_count: number;
  page_size: number;
  total_count: number;
}

/** Every refusal: RabbitMQ's `error` and `reason`. */
export interface BrokerError {
  error: string;
  reason: string;
}

/**
 * A request to the broker views once signed in, whichever door it came through (basic
 * auth on /api/, or a console session on /console/api/rabbitmq/): the account is the
 * caller's, `who` names the caller in the log.
 */
export interface BrokerRequest {
  method: string;
  /** The decoded path segments after the API's prefix. */
  parts: string[];
  query: string;
  headers: Record<string, string | string[] | undefined>;
  account: string;
  who: Record<string, unknown>;
}

import type { Socket } from 'node:net';
import type { FieldTable, FieldValue } from './codec.js';
import type { Connection } from './connection.js';

/**
 * Read-only snapshots of this node's AMQP connections, channels and consumers, for the
 * management API and the console (src/server/management/). They are plain data taken
 * when asked: nothing here holds a reference to a socket or a channel.
 */
export interface AmqpConsumerView {
  tag: string;
  queue: string;
  queueId: number;
  ackRequired: boolean;
  exclusive: boolean;
  /** The channel's per-consumer prefetch (basic.qos with global=false); 0 is unlimited. */
  prefetchCount: number;
  /** Deliveries to this consumer not yet settled. */
  unacked: number;
}

export interface AmqpChannelView {
  number: number;
  prefetchCount: number;
  globalPrefetchCount: number;
  unacked: number;
  confirm: boolean;
  consumers: AmqpConsumerView[];
}

export interface AmqpConnectionView {
  /** RabbitMQ's connection name: `peer_host:peer_port -> host:port`. */
  name: string;
  /** `AMQP 1-0` for AMQP 1.0 connections (src/protocols/amqp10/live-view.ts); absent for 0-9-1. */
  protocol?: 'AMQP 1-0';
  accountId: string;
  user: string;
  peerHost: string;
  peerPort: number;
  host: string;
  port: number;
  connectedAt: number;
  /** `starting` (before sign-in), `tuning`, `opening`, `running`, `closing` or `closed`. */
  state: string;
  clientProperties: Record<string, unknown>;
  heartbeat: number;
  frameMax: number;
  recvOct: number;
  sendOct: number;
  channels: AmqpChannelView[];
}

/** What the server's wiring gives the management API of the AMQP listener. */
export interface AmqpLiveState {
  /** The connections of an account that have signed in, oldest first. */
  connections(accountId: string): AmqpConnectionView[];
  /** Closes the account's connection of that name with 320 CONNECTION_FORCED; false when there is none. */
  closeConnection(accountId: string, name: string, reason: string): boolean;
}

const STATES: Record<string, string> = {
  header: 'starting',
  'start-ok': 'starting',
  'tune-ok': 'tuning',
  open: 'opening',
  ready: 'running',
  closing: 'closing',
  closed: 'closed',
};

/** RabbitMQ's connection name, `peer_host:peer_port -> host:port`, taken when the socket was accepted. */
export const connectionName = (c: Connection): string => c.stats.name;

export function connectionView(c: Connection): AmqpConnectionView | undefined {
  // A closed connection may wait a moment for its socket to end: it is gone already.
  if (!c.login || c.state === 'closed') return undefined;
  const s = c.socket;
  const channels = [...c.channels.values()]
    .filter((ch) => ch.open && !ch.closing)
    .map(
      (ch): AmqpChannelView => ({
        number: ch.number,
        prefetchCount: ch.prefetchConsumer,
        globalPrefetchCount: ch.prefetchChannel,
        unacked: ch.unacked.size,
        confirm: ch.publisher.confirming,
        consumers: [...ch.consumers.values()]
          .filter((x) => x.active)
          .map((x) => ({
            tag: x.tag,
            queue: x.queue.name,
            queueId: x.queue.id,
            ackRequired: !x.noAck,
            exclusive: x.exclusive,
            prefetchCount: ch.prefetchConsumer,
            unacked: x.unacked,
          })),
      }),
    );
  return {
    name: connectionName(c),
    accountId: c.login.account,
    user: c.login.user,
    ...socketEnds(s),
    connectedAt: c.stats.connectedAt,
    state: STATES[c.state] ?? c.state,
    clientProperties: plainTable(c.stats.clientProperties as FieldTable | undefined),
    heartbeat: c.stats.heartbeat,
    frameMax: c.frameMax,
    recvOct: c.stats.recvOct,
    sendOct: c.stats.sendOct,
    channels,
  };
}

/** Both ends of a connection's socket, as the views name them (0-9-1's and 1.0's). */
export function socketEnds(s: Socket): Pick<AmqpConnectionView, 'peerHost' | 'peerPort' | 'host' | 'port'> {
  return {
    peerHost: s.remoteAddress ?? '',
    peerPort: s.remotePort ?? 0,
    host: s.localAddress ?? '',
    port: s.localPort ?? 0,
  };
}

/**
 * A field table as plain JSON, as RabbitMQ's management API shows client properties: a
 * null-prototype object, since the keys are the client's.
 */
function plainTable(t: FieldTable | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = Object.create(null);
  if (t instanceof Map) for (const [k, v] of t) out[k] = plain(v);
  return out;
}

function plain(v: FieldValue): unknown {
  switch (v.type) {
    case 'F':
      return plainTable(v.value);
    case 'A':
      return v.value.map(plain);
    case 'S':
      return v.value.toString('utf8');
    case 'x':
      return v.value.toString('base64');
    case 'l':
    case 'T':
      return Number(v.value);
    case 'D':
      return v.value.digits / 10 ** v.value.places;
    default:
      return (v as { value?: unknown }).value ?? null;
  }
}

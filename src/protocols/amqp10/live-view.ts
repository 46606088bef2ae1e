import { socketEnds, type AmqpConnectionView } from '../amqp/live-view.js';
import type { Amqp10Connection } from './connection.js';

/**
 * An AMQP 1.0 connection as the management API and the console show AMQP connections
 * (src/protocols/amqp/live-view.ts): its sessions as channels, its sending links as
 * their consumers (tag = the link's name), with RabbitMQ 4's protocol name `AMQP 1-0`.
 */
export function amqp10ConnectionView(c: Amqp10Connection): AmqpConnectionView | undefined {
  if (!c.login || !c.opened) return undefined;
  return {
    name: c.stats.name,
    protocol: 'AMQP 1-0',
    accountId: c.login.account,
    user: c.login.user,
    ...socketEnds(c.socket),
    connectedAt: c.stats.connectedAt,
    state: 'running',
    clientProperties: { container_id: c.stats.containerId },
    heartbeat: 60,
    frameMax: c.peerMaxFrame,
    recvOct: c.stats.recvOct,
    sendOct: c.stats.sendOct,
    channels: c.sessionList().map((session) => {
      const links = session.sendingLinks();
      return {
        number: session.channel,
        prefetchCount: 0,
        globalPrefetchCount: 0,
        unacked: links.reduce((n, l) => n + l.unsettled, 0),
        confirm: false,
        consumers: links.map(({ link, unsettled }) => ({
          tag: link.name,
          queue: link.queue.name,
          queueId: link.queue.id,
          ackRequired: !link.settled,
          exclusive: false,
          prefetchCount: link.credit,
          unacked: unsettled,
        })),
      };
    }),
  };
}

import type { ChannelInfo, ConnectionInfo, ConsumerInfo, SqsClientInfo } from '../../wire/broker-api.js';
import { rabbit, refreshWhileVisible } from './broker-api.js';
import { confirmAction } from './dialog.js';
import { badge, content, count, duration, errorText, flash, h, queueHref, replace, time } from './dom.js';

/**
 * Who is connected: SQS clients by access key (requests over the last minute) and AMQP
 * connections with their channels and consumers, each connection with a Close button.
 * The data is the management API's (`/api/sqs-clients`, `/api/connections`, `/api/channels`,
 * `/api/consumers`), refreshed every 10 s while the tab is visible.
 */
export async function connectionsPage(): Promise<void> {
  const sqs = h('section', { id: 'sqs-clients' });
  const amqp = h('section', { id: 'amqp-connections' });
  const load = async () => {
    const [clients, connections, channels, consumers] = await Promise.all([
      rabbit<SqsClientInfo[]>('sqs-clients'),
      rabbit<ConnectionInfo[]>('connections'),
      rabbit<ChannelInfo[]>('channels'),
      rabbit<ConsumerInfo[]>('consumers'),
    ]);
    renderSqs(sqs, clients);
    renderAmqp(amqp, connections, channels, consumers, () => void load());
  };
  await load();
  replace(content(), sqs, amqp);
  refreshWhileVisible(load, 10_000);
}

function renderSqs(section: HTMLElement, clients: SqsClientInfo[]): void {
  replace(
    section,
    h('h2', {}, 'SQS clients'),
    h('p', { class: 'muted' }, 'Requests by access key, from this server node; the most recently seen first.'),
    clients.length === 0
      ? h('p', { class: 'empty' }, 'No SQS request yet.')
      : h(
          'table',
          { id: 'sqs-clients-table' },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              h('th', {}, 'Access key'),
              h('th', {}, 'Last address'),
              h('th', { class: 'num' }, 'Requests, last minute'),
              h('th', { class: 'num' }, 'Per second'),
              h('th', { class: 'num' }, 'Requests'),
              h('th', {}, 'Last seen'),
            ),
          ),
          h(
            'tbody',
            {},
            clients.map((c) =>
              h(
                'tr',
                { 'data-access-key': c.access_key },
                h('td', { class: 'mono' }, c.access_key),
                h('td', { class: 'mono' }, c.peer_host),
                h('td', { class: 'num' }, count(c.requests_last_minute)),
                h('td', { class: 'num' }, c.rate.toFixed(2)),
                h('td', { class: 'num' }, count(c.requests)),
                h('td', {}, time(c.last_seen)),
              ),
            ),
          ),
        ),
  );
}

/** A 0-9-1 client's name and product; a 1.0 client's container id (its `open` says no more). */
const clientName = (c: ConnectionInfo) => {
  const p = c.client_properties;
  const product = [p.product, p.version].filter((x) => typeof x === 'string').join(' ');
  const container = typeof p.container_id === 'string' ? p.container_id : undefined;
  return [c.user_provided_name, product, container].filter(Boolean).join(' · ') || '–';
};

const isAmqp10 = (c: ConnectionInfo) => c.protocol === 'AMQP 1-0';

function renderAmqp(
  section: HTMLElement,
  connections: ConnectionInfo[],
  channels: ChannelInfo[],
  consumers: ConsumerInfo[],
  reload: () => void,
): void {
  replace(
    section,
    h('h2', {}, 'AMQP connections'),
    connections.length === 0
      ? h('p', { class: 'empty' }, 'No AMQP connection (the listener is on with --amqp-port).')
      : h(
          'table',
          { id: 'amqp-connections-table', class: 'compact' },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              [
                'Connection',
                'Protocol',
                'User',
                'Client',
                'Channels',
                'Consumers',
                'Prefetch',
                'Unacked',
                'Connected',
                '',
              ].map((t, i) => h('th', { class: i >= 4 && i <= 7 ? 'num' : undefined }, t)),
            ),
          ),
          h(
            'tbody',
            {},
            connections.map((c) => {
              const mine = channels.filter((ch) => ch.connection_details.name === c.name);
              const theirs = consumers.filter((x) => x.channel_details.connection_name === c.name);
              // A 1.0 session has no prefetch: each receiving link's credit is its consumer's.
              const prefetch =
                (!isAmqp10(c) &&
                  [...new Set(mine.map((ch) => ch.prefetch_count))]
                    .map((n) => (n === 0 ? '∞' : count(n)))
                    .join(', ')) ||
                '–';
              return h(
                'tr',
                { 'data-connection': c.name },
                h('td', { class: 'mono' }, c.name, c.state !== 'running' ? [' ', badge(c.state, 'warn')] : null),
                h('td', {}, c.protocol),
                h('td', {}, c.user),
                h('td', { class: 'wrap' }, clientName(c)),
                h('td', { class: 'num' }, count(c.channels)),
                h('td', { class: 'num' }, count(theirs.length)),
                h('td', { class: 'num' }, prefetch),
                h('td', { class: 'num' }, count(mine.reduce((n, ch) => n + ch.messages_unacknowledged, 0))),
                h('td', { title: time(c.connected_at) }, `${duration((Date.now() - c.connected_at) / 1000)} ago`),
                h(
                  'td',
                  {},
                  h(
                    'button',
                    { type: 'button', class: 'small danger close-connection', onclick: () => void close(c, reload) },
                    'Close…',
                  ),
                ),
              );
            }),
          ),
        ),
    consumers.length === 0
      ? null
      : [
          h('h3', {}, 'Consumers'),
          h(
            'p',
            { class: 'muted' },
            "An AMQP 1.0 receiving link is a consumer: the link's name, its credit as prefetch.",
          ),
          consumersTable(consumers, 'amqp-consumers-table', true),
        ],
  );
}

/** AMQP consumers: tag, queue, channel, prefetch, unacknowledged deliveries (also on a queue's page). */
export function consumersTable(consumers: ConsumerInfo[], id: string, withQueue: boolean): HTMLElement {
  return h(
    'table',
    { id },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        h('th', {}, 'Consumer tag'),
        withQueue ? h('th', {}, 'Queue') : null,
        h('th', {}, 'Channel'),
        h('th', {}, 'User'),
        h('th', {}, 'Ack'),
        h('th', { class: 'num' }, 'Prefetch'),
        h('th', { class: 'num' }, 'Unacked'),
      ),
    ),
    h(
      'tbody',
      {},
      consumers.map((x) =>
        h(
          'tr',
          { 'data-consumer': x.consumer_tag },
          h('td', { class: 'mono' }, x.consumer_tag, x.exclusive ? [' ', badge('exclusive', 'info')] : null),
          withQueue ? h('td', {}, h('a', { href: queueHref(x.queue.name) }, x.queue.name)) : null,
          h('td', { class: 'mono' }, x.channel_details.name),
          h('td', {}, x.channel_details.user),
          h('td', {}, x.ack_required ? 'manual' : 'auto'),
          h('td', { class: 'num' }, x.prefetch_count === 0 ? '∞' : count(x.prefetch_count)),
          h('td', { class: 'num' }, count(x.messages_unacknowledged)),
        ),
      ),
    ),
  );
}

async function close(c: ConnectionInfo, reload: () => void): Promise<void> {
  const ok = await confirmAction(
    'Close this connection?',
    `${c.name} (${c.user}) is closed with 320 CONNECTION_FORCED; its unacknowledged messages go back to their queues. A client that reconnects by itself will come back.`,
    'Close connection',
  );
  if (!ok) return;
  try {
    await rabbit(`connections/${encodeURIComponent(c.name)}`, {
      method: 'DELETE',
      headers: { 'x-reason': 'Closed from the Redrive console' },
    });
    flash(`Closed ${c.name}.`);
  } catch (e) {
    flash(errorText(e), 'error');
  }
  reload();
}

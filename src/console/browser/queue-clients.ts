import { ApiError, pageRegion } from './api.js';
import type { QueueDetail } from '../../wire/broker-api.js';
import { rabbit } from './broker-api.js';
import { consumersTable } from './connections-page.js';
import { count, duration, h, replace } from './dom.js';

/** The two columns asked for (`?columns=`). */
type QueueClients = Pick<QueueDetail, 'consumer_details' | 'long_poll_receivers'>;

/**
 * A queue's clients on its page: AMQP consumers (prefetch, unacknowledged) and the SQS long
 * polls waiting on it now, with their addresses, from `GET /api/queues/%2F/<name>`. AMQP
 * reaches the default region's queues only; elsewhere the section stays empty.
 */
export function queueClients(name: string): HTMLElement | null {
  if (pageRegion()) return null;
  const section = h(
    'section',
    { id: 'queue-clients' },
    h('h2', {}, 'Consumers and receivers'),
    h('p', { class: 'muted' }, 'Loading…'),
  );
  rabbit<QueueClients>(`queues/%2F/${encodeURIComponent(name)}?columns=consumer_details,long_poll_receivers`).then(
    (q) => {
      const consumers = q.consumer_details ?? [];
      const receivers = q.long_poll_receivers ?? [];
      replace(
        section,
        h('h2', {}, 'Consumers and receivers'),
        h('h3', {}, `AMQP consumers: ${count(consumers.length)}`),
        consumers.length ? consumersTable(consumers, 'queue-consumers-table', false) : null,
        h('h3', { id: 'long-poll-count' }, `SQS long polls waiting now: ${count(receivers.length)}`),
        receivers.length
          ? h(
              'ul',
              { id: 'long-poll-receivers' },
              receivers.map((r) =>
                h(
                  'li',
                  {},
                  h('code', {}, r.peer_host ?? '?'),
                  h(
                    'span',
                    { class: 'muted' },
                    ` waiting ${duration((Date.now() - r.waiting_since) / 1000)}, ends in ${duration((r.wait_ends_at - Date.now()) / 1000)}`,
                  ),
                ),
              ),
            )
          : null,
      );
    },
    (e: unknown) => {
      if (e instanceof ApiError && e.status === 404) section.remove();
      else replace(section, h('h2', {}, 'Consumers and receivers'), h('p', { class: 'error' }, (e as Error).message));
    },
  );
  return section;
}

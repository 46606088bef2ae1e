import type { BindingInfo, ExchangeInfo } from '../../wire/broker-api.js';
import { rabbit } from './broker-api.js';
import { content, count, h, queueHref, replace } from './dom.js';

const exchangeLabel = (name: string) => (name === '' ? '(default)' : name);
const args = (a: Record<string, unknown>) => (Object.keys(a).length ? JSON.stringify(a) : '');

/**
 * The account's AMQP exchanges, each with the bindings from it: the routes dead-lettering
 * through an exchange follows. The default exchange's implicit binding to every queue is
 * counted, not listed. From `/api/exchanges` and `/api/bindings`.
 */
export async function exchangesPage(): Promise<void> {
  const [exchanges, bindings] = await Promise.all([
    rabbit<ExchangeInfo[]>('exchanges/%2F'),
    rabbit<BindingInfo[]>('bindings/%2F'),
  ]);
  const from = new Map<string, BindingInfo[]>();
  for (const b of bindings) from.set(b.source, [...(from.get(b.source) ?? []), b]);
  replace(
    content(),
    h(
      'table',
      { id: 'exchanges-table' },
      h(
        'thead',
        {},
        h('tr', {}, h('th', {}, 'Exchange'), h('th', {}, 'Type'), h('th', {}, 'Features'), h('th', {}, 'Bindings')),
      ),
      h(
        'tbody',
        {},
        exchanges.map((x) => {
          const out = from.get(x.name) ?? [];
          return h(
            'tr',
            { 'data-exchange': x.name },
            h('td', { class: 'mono' }, exchangeLabel(x.name)),
            h('td', {}, x.type),
            h(
              'td',
              { class: 'muted' },
              [
                x.durable ? 'durable' : 'transient',
                x.auto_delete ? 'auto-delete' : '',
                x.internal ? 'internal' : '',
                args(x.arguments),
              ]
                .filter(Boolean)
                .join(' · '),
            ),
            h(
              'td',
              {},
              x.name === ''
                ? `${count(out.length)} queue${out.length === 1 ? '' : 's'}, each by its name`
                : out.length === 0
                  ? h('span', { class: 'muted' }, 'none')
                  : bindingList(out),
            ),
          );
        }),
      ),
    ),
  );
}

function bindingList(bindings: BindingInfo[]): HTMLElement {
  return h(
    'div',
    { class: 'bindings' },
    bindings.map((b) =>
      h(
        'div',
        {},
        h('code', {}, b.routing_key === '' ? '""' : b.routing_key),
        ' → ',
        b.destination_type === 'queue'
          ? ['queue ', h('a', { href: queueHref(b.destination) }, b.destination)]
          : ['exchange ', h('code', {}, b.destination)],
        args(b.arguments) ? h('span', { class: 'muted' }, ` ${args(b.arguments)}`) : null,
      ),
    ),
  );
}

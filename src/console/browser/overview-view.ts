import { badge, count, duration, h, perSecond, queueHref, queueNameOf, replace } from './dom.js';
import { deadLetterTargetOf, type QueueSummary } from './queue-summaries.js';

/**
 * What the overview shows of one ListQueueSummaries answer: the dead-letter queues' cards,
 * the table of queues with its sortable columns, and the pager. overview-page.ts asks for
 * the answer and refreshes it.
 */

const MESSAGES = 'Messages';
/** The rates' group heading (docs/monitoring.md, "Rates"). */
const RATES = 'Per second, last minute';
export const PAGE_SIZES = [50, 100, 500];

export type SortKey =
  | 'name'
  | 'region'
  | 'type'
  | 'role'
  | 'visible'
  | 'inFlight'
  | 'delayed'
  | 'oldest'
  | 'sent'
  | 'received'
  | 'deleted'
  | 'deadLettered';
/** Key, heading, numeric (sorts descending first), group heading above it. */
export const COLUMNS: [SortKey, string, boolean, string?][] = [
  ['name', 'Name', false],
  ['region', 'Region', false],
  ['type', 'Type', false],
  ['role', 'Dead-letter role', false],
  ['visible', 'Visible', true, MESSAGES],
  ['inFlight', 'In flight', true, MESSAGES],
  ['delayed', 'Delayed', true, MESSAGES],
  ['oldest', 'Oldest', true, MESSAGES],
  ['sent', 'Sent', true, RATES],
  ['received', 'Received', true, RATES],
  ['deleted', 'Deleted', true, RATES],
  ['deadLettered', 'Dead-lettered', true, RATES],
];

const exchangeName = (x: string) => (x === '' ? '(default exchange)' : x);

const depth = (q: QueueSummary) =>
  q.ApproximateNumberOfMessages + q.ApproximateNumberOfMessagesNotVisible + q.ApproximateNumberOfMessagesDelayed;

export interface Overview {
  Queues: QueueSummary[];
  TotalCount: number;
  DeadLetterQueues: QueueSummary[];
  DeadLetterQueueCount: number;
}

export function renderPager(
  nav: HTMLElement,
  state: { page: number; size: number },
  total: number,
  go: (page: number, size: number) => void,
): void {
  const first = total === 0 ? 0 : state.page * state.size + 1;
  const last = Math.min(total, (state.page + 1) * state.size);
  const pages = Math.max(1, Math.ceil(total / state.size));
  replace(
    nav,
    h('span', { class: 'muted', id: 'queue-range' }, `${count(first)}–${count(last)} of ${count(total)}`),
    h(
      'button',
      { type: 'button', disabled: state.page === 0, onclick: () => go(state.page - 1, state.size) },
      '← Previous',
    ),
    h('span', { class: 'muted' }, `page ${count(state.page + 1)} of ${count(pages)}`),
    h(
      'button',
      { type: 'button', disabled: state.page + 1 >= pages, onclick: () => go(state.page + 1, state.size) },
      'Next →',
    ),
    h(
      'label',
      { class: 'inline' },
      'Per page ',
      h(
        'select',
        {
          onchange: (e: Event) => go(0, Number((e.target as HTMLSelectElement).value)),
        },
        PAGE_SIZES.map((n) => h('option', { value: n, selected: n === state.size }, String(n))),
      ),
    ),
  );
}

export function renderRelations(section: HTMLElement, data: Overview): void {
  const dlqs = data.DeadLetterQueues;
  if (dlqs.length === 0) {
    replace(section);
    return;
  }
  const more = data.DeadLetterQueueCount - dlqs.length;
  replace(
    section,
    h('h2', {}, 'Dead-letter queues with messages'),
    more > 0
      ? h(
          'p',
          { class: 'muted' },
          `The ${count(dlqs.length)} with the most messages of ${count(data.DeadLetterQueueCount)}; `,
          h('a', { href: '/console/queues?show=DeadLetterQueuesWithMessages' }, 'list them all'),
          '.',
        )
      : null,
    h(
      'div',
      { class: 'dlq-grid', id: 'dlq-cards' },
      dlqs.map((q) => {
        const n = depth(q);
        return h(
          'article',
          { class: 'dlq-card has-messages', 'data-queue': q.QueueName },
          h(
            'header',
            {},
            h('a', { href: queueHref(q.QueueName, '', q.Region) }, q.QueueName),
            badge(`${count(n)} message${n === 1 ? '' : 's'}`, 'danger'),
          ),
          h(
            'p',
            { class: 'feeds' },
            h('span', { class: 'muted' }, 'fed by '),
            q.DeadLetterSourceQueueUrls.map((u, i) => {
              const exchange = q.DeadLetterSourceExchanges?.find((s) => s.QueueUrl === u)?.Exchange;
              const via =
                exchange !== undefined
                  ? h('span', { class: 'muted via-exchange' }, ` via exchange ${exchangeName(exchange)}`)
                  : null;
              return [i ? ', ' : '', h('a', { href: queueHref(queueNameOf(u), '', q.Region) }, queueNameOf(u)), via];
            }),
          ),
          h(
            'p',
            { class: 'card-links' },
            h('span', { class: 'muted' }, `oldest ${duration(q.ApproximateAgeOfOldestMessage)}`),
            q.Rates?.DeadLetterArrivals
              ? h(
                  'span',
                  {
                    class: 'error-text arriving',
                    title: 'Dead-lettered messages arriving per second over the last minute',
                  },
                  `+${perSecond(q.Rates.DeadLetterArrivals)}/s`,
                )
              : null,
            h('a', { href: queueHref(q.QueueName, '/messages', q.Region) }, 'Browse'),
            h('a', { href: queueHref(q.QueueName, '/redrive', q.Region) }, 'Redrive'),
          ),
        );
      }),
    ),
  );
}

/** The row above the headings that names each group of columns once. */
function groupHeadings(): HTMLElement[] {
  const cells: HTMLElement[] = [];
  for (let i = 0; i < COLUMNS.length; ) {
    const group = COLUMNS[i]![3];
    let span = 1;
    while (i + span < COLUMNS.length && COLUMNS[i + span]![3] === group) span++;
    cells.push(h('th', { colspan: span, class: group ? 'group' : undefined, scope: 'colgroup' }, group ?? ''));
    i += span;
  }
  return cells;
}

export function renderTable(
  wrap: HTMLElement,
  state: { filter: string; type: string; only: string; sort: SortKey; desc: boolean },
  data: Overview,
  onSort: (k: SortKey) => void,
): void {
  const rows = data.Queues;
  const filtered = state.filter || state.type || state.only;
  if (data.TotalCount === 0 && !filtered) {
    replace(
      wrap,
      h(
        'p',
        { class: 'empty' },
        'No queues yet. ',
        h('a', { href: '/console/create-queue' }, 'Create the first one'),
        '.',
      ),
    );
    return;
  }
  replace(
    wrap,
    h(
      'table',
      { class: 'queues', id: 'queues-table' },
      h(
        'thead',
        {},
        h('tr', { class: 'groups' }, groupHeadings()),
        h(
          'tr',
          {},
          COLUMNS.map(([key, label, numeric, group]) =>
            h(
              'th',
              {
                class: `${numeric ? 'num' : ''}${group === RATES ? ' rate' : ''}`,
                title: group === RATES ? `Messages ${label.toLowerCase()} per second over the last minute` : undefined,
                'aria-sort': state.sort === key ? (state.desc ? 'descending' : 'ascending') : undefined,
              },
              h(
                'button',
                { type: 'button', class: 'sort', onclick: () => onSort(key) },
                label,
                state.sort === key ? (state.desc ? ' ↓' : ' ↑') : '',
              ),
            ),
          ),
        ),
      ),
      h(
        'tbody',
        {},
        rows.length === 0
          ? h(
              'tr',
              {},
              h(
                'td',
                { colspan: COLUMNS.length, class: 'empty' },
                state.filter ? `No queue name contains “${state.filter}”.` : 'No queue matches.',
              ),
            )
          : rows.map((q) => {
              const target = deadLetterTargetOf(q.RedrivePolicy);
              const isDlq = q.DeadLetterSourceQueueUrls.length > 0;
              return h(
                'tr',
                { class: isDlq && depth(q) > 0 ? 'attention' : undefined, 'data-queue': q.QueueName },
                h('td', {}, h('a', { href: queueHref(q.QueueName, '', q.Region) }, q.QueueName)),
                h('td', {}, q.Region),
                h('td', {}, q.FifoQueue ? 'FIFO' : 'Standard'),
                h(
                  'td',
                  {},
                  h(
                    'span',
                    { class: 'roles' },
                    isDlq
                      ? badge(
                          'DLQ',
                          depth(q) > 0 ? 'danger' : 'neutral',
                          `Dead-letter queue of ${q.DeadLetterSourceQueueUrls.map(queueNameOf).join(', ')}`,
                        )
                      : null,
                    target
                      ? h(
                          'span',
                          { class: 'feeds-into' },
                          badge('source', 'info'),
                          ' → ',
                          h('a', { href: queueHref(queueNameOf(target.arn), '', q.Region) }, queueNameOf(target.arn)),
                          h(
                            'span',
                            { class: 'muted' },
                            ` after ${target.maxReceiveCount}${q.RedrivePolicySource?.startsWith('policy:') ? ` (policy ${q.RedrivePolicySource.slice(7)})` : ''}`,
                          ),
                        )
                      : null,
                    q.DeadLetterExchange !== undefined
                      ? h(
                          'span',
                          { class: 'feeds-into via-exchange' },
                          badge('source', 'info'),
                          ' → ',
                          h(
                            'span',
                            { class: 'exchange', title: 'AMQP dead-letter exchange' },
                            `exchange ${exchangeName(q.DeadLetterExchange)}`,
                          ),
                          q.DeadLetterRoutingKey !== undefined
                            ? h('span', { class: 'muted' }, ` (key ${q.DeadLetterRoutingKey})`)
                            : null,
                          ' → ',
                          (q.DeadLetterTargetQueueNames ?? []).length === 0
                            ? h('span', { class: 'muted' }, 'no queue bound')
                            : (q.DeadLetterTargetQueueNames ?? []).map((n, i) => [
                                i ? ', ' : '',
                                h('a', { href: queueHref(n, '', q.Region) }, n),
                              ]),
                        )
                      : null,
                  ),
                ),
                h('td', { class: 'num' }, count(q.ApproximateNumberOfMessages)),
                h('td', { class: 'num' }, count(q.ApproximateNumberOfMessagesNotVisible)),
                h('td', { class: 'num' }, count(q.ApproximateNumberOfMessagesDelayed)),
                h('td', { class: 'num' }, duration(q.ApproximateAgeOfOldestMessage)),
                h('td', { class: 'num rate' }, perSecond(q.Rates?.Sent)),
                h('td', { class: 'num rate' }, perSecond(q.Rates?.Received)),
                h('td', { class: 'num rate' }, perSecond(q.Rates?.Deleted)),
                h(
                  'td',
                  { class: `num rate${q.Rates?.DeadLettered ? ' error-text' : ''}` },
                  perSecond(q.Rates?.DeadLettered),
                ),
              );
            }),
      ),
    ),
  );
}

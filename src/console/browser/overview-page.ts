import {
  badge,
  content,
  count,
  duration,
  errorText,
  h,
  perSecond,
  queueHref,
  queueNameOf,
  replace,
  time,
} from './dom.js';
import { call } from './api.js';
import { deadLetterTargetOf, type QueueSummary } from './queue-summaries.js';

const REFRESH_MS = 5_000;
const MESSAGES = 'Messages';
/** The rates' group heading (docs/monitoring.md, "Rates"). */
const RATES = 'Per second, last minute';
/**
 * Refreshes are spaced at least this many times the last one's duration, so an idle tab
 * costs the server at most about 1% of a core however many queues the account has.
 */
const REFRESH_COST_RATIO = 100;
/** ... but never less often than this. */
const REFRESH_MAX_MS = 60_000;
const PAGE_SIZES = [50, 100, 500];
/** Typing in the filter asks the server once the typing pauses. */
const FILTER_DELAY_MS = 250;

type SortKey =
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
const COLUMNS: [SortKey, string, boolean, string?][] = [
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
/** The server's SortBy for each column (ListQueueSummaries, docs/extensions.md). */
const SORT_BY: Record<SortKey, string> = {
  name: 'Name',
  region: 'Region',
  type: 'Type',
  role: 'Role',
  visible: 'Visible',
  inFlight: 'InFlight',
  delayed: 'Delayed',
  oldest: 'Oldest',
  sent: 'SentRate',
  received: 'ReceivedRate',
  deleted: 'DeletedRate',
  deadLettered: 'DeadLetteredRate',
};

const exchangeName = (x: string) => (x === '' ? '(default exchange)' : x);
const SHOW: [string, string][] = [
  ['', 'All queues'],
  ['WithMessages', 'With messages'],
  ['DeadLetterQueues', 'Dead-letter queues'],
  ['DeadLetterQueuesWithMessages', 'Dead-letter queues with messages'],
];

const depth = (q: QueueSummary) =>
  q.ApproximateNumberOfMessages + q.ApproximateNumberOfMessagesNotVisible + q.ApproximateNumberOfMessagesDelayed;

interface Overview {
  Queues: QueueSummary[];
  TotalCount: number;
  DeadLetterQueues: QueueSummary[];
  DeadLetterQueueCount: number;
}

/**
 * The account's queues in every region, one page at a time: the server filters, sorts and
 * pages them (so 100,000 queues cost one page), and the same request brings the
 * dead-letter queues' cards, those holding messages first. One request per refresh, none
 * while the tab is hidden.
 */
export function overviewPage(): void {
  const params = new URLSearchParams(location.search);
  const state = {
    filter: params.get('q') ?? '',
    type: params.get('type') ?? '',
    only: params.get('show') ?? '',
    sort: (params.get('sort') as SortKey | null) ?? 'name',
    desc: params.get('dir') === 'desc',
    page: Math.max(0, Number(params.get('page') ?? 1) - 1 || 0),
    size: PAGE_SIZES.includes(Number(params.get('size'))) ? Number(params.get('size')) : 100,
    auto: params.get('refresh') !== 'off',
    data: undefined as Overview | undefined,
    updated: 0,
    error: '',
  };
  const filterInput = h('input', {
    type: 'search',
    placeholder: 'Filter by name',
    value: state.filter,
    'aria-label': 'Filter queues by name',
  });
  const typeSelect = h(
    'select',
    { 'aria-label': 'Queue type' },
    [
      ['', 'Any type'],
      ['standard', 'Standard'],
      ['fifo', 'FIFO'],
    ].map(([v, l]) => h('option', { value: v!, selected: state.type === v }, l!)),
  );
  const showSelect = h(
    'select',
    { 'aria-label': 'Show' },
    SHOW.map(([v, l]) => h('option', { value: v, selected: state.only === v }, l)),
  );
  const autoBox = h('input', { type: 'checkbox', checked: state.auto });
  const status = h('span', { class: 'muted', id: 'updated' });
  const relations = h('section', { id: 'dead-letter-map' });
  const table = h('div', { class: 'table-wrap' });
  const pager = h('nav', { class: 'pager', 'aria-label': 'Pages of queues' });
  replace(
    content(),
    h(
      'div',
      { class: 'toolbar' },
      filterInput,
      typeSelect,
      showSelect,
      h('label', { class: 'inline' }, autoBox, ' Auto-refresh'),
      status,
      h('span', { class: 'spacer' }),
      h('a', { class: 'button', href: '/console/create-queue' }, 'Create queue'),
    ),
    relations,
    h('h2', {}, 'All queues'),
    table,
    pager,
  );

  const keepUrl = () => {
    const p = new URLSearchParams();
    if (state.filter) p.set('q', state.filter);
    if (state.type) p.set('type', state.type);
    if (state.only) p.set('show', state.only);
    if (state.sort !== 'name') p.set('sort', state.sort);
    if (state.desc) p.set('dir', 'desc');
    if (state.page) p.set('page', String(state.page + 1));
    if (state.size !== 100) p.set('size', String(state.size));
    if (!state.auto) p.set('refresh', 'off');
    history.replaceState(null, '', `${location.pathname}${p.toString() ? `?${p}` : ''}`);
  };
  const render = () => {
    status.textContent = state.error
      ? `Refresh failed: ${state.error}`
      : state.updated
        ? `Updated ${time(state.updated).slice(11)}`
        : '';
    status.className = state.error ? 'error-text' : 'muted';
    if (!state.data) return;
    renderRelations(relations, state.data);
    renderTable(table, state, state.data, (key) => {
      state.desc = state.sort === key ? !state.desc : COLUMNS.find((c) => c[0] === key)![2];
      state.sort = key;
      state.page = 0;
      changed();
    });
    renderPager(pager, state, state.data.TotalCount, (page, size) => {
      state.page = page;
      state.size = size;
      changed();
    });
  };
  let inFlight: Promise<void> | undefined;
  let interval = REFRESH_MS;
  let again = false;
  const refresh = async (): Promise<void> => {
    // One request at a time; a change made meanwhile asks again once it is answered.
    if (inFlight) {
      again = true;
      return inFlight;
    }
    inFlight = (async () => {
      const started = performance.now();
      try {
        state.data = await call<Overview>('ListQueueSummaries', {
          AllRegions: true,
          IncludeDeadLetterQueues: true,
          MaxResults: state.size,
          SortBy: SORT_BY[state.sort],
          SortOrder: state.desc ? 'Descending' : 'Ascending',
          ...(state.page > 0 && { NextToken: offsetToken(state.page * state.size) }),
          ...(state.filter && { NameContains: state.filter }),
          ...(state.type && { QueueType: state.type }),
          ...(state.only && { Only: state.only }),
        });
        state.updated = Date.now();
        state.error = '';
      } catch (e) {
        state.error = errorText(e);
      }
      interval = Math.min(REFRESH_MAX_MS, Math.max(REFRESH_MS, REFRESH_COST_RATIO * (performance.now() - started)));
      render();
    })();
    await inFlight;
    inFlight = undefined;
    if (again) {
      again = false;
      await refresh();
    }
  };
  const changed = () => {
    keepUrl();
    void refresh();
  };
  let typing: ReturnType<typeof setTimeout> | undefined;
  filterInput.addEventListener('input', () => {
    clearTimeout(typing);
    typing = setTimeout(() => {
      state.filter = filterInput.value.trim();
      state.page = 0;
      changed();
    }, FILTER_DELAY_MS);
  });
  typeSelect.addEventListener('change', () => {
    state.type = typeSelect.value;
    state.page = 0;
    changed();
  });
  showSelect.addEventListener('change', () => {
    state.only = showSelect.value;
    state.page = 0;
    changed();
  });
  autoBox.addEventListener('change', () => {
    state.auto = autoBox.checked;
    keepUrl();
  });
  const tick = async () => {
    if (state.auto && document.visibilityState === 'visible' && Date.now() - state.updated >= interval - 50)
      await refresh();
    setTimeout(() => void tick(), interval);
  };
  void refresh().then(() => setTimeout(() => void tick(), interval));
  // A tab brought back after a while shows fresh figures at once, not at the next tick.
  document.addEventListener('visibilitychange', () => {
    if (state.auto && document.visibilityState === 'visible' && Date.now() - state.updated > interval) void refresh();
  });
}

/** The overview query's NextToken for a page (an offset: docs/extensions.md). */
const offsetToken = (offset: number) => btoa(JSON.stringify({ offset }));

function renderPager(
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

function renderRelations(section: HTMLElement, data: Overview): void {
  const dlqs = data.DeadLetterQueues;
  if (dlqs.length === 0) {
    replace(section);
    return;
  }
  const more = data.DeadLetterQueueCount - dlqs.length;
  replace(
    section,
    h('h2', {}, 'Dead-letter queues'),
    more > 0
      ? h(
          'p',
          { class: 'muted' },
          `The ${count(dlqs.length)} with the most messages of ${count(data.DeadLetterQueueCount)}; `,
          h('a', { href: '/console/queues?show=DeadLetterQueues' }, 'list them all'),
          '.',
        )
      : null,
    h(
      'div',
      { class: 'dlq-grid' },
      dlqs.map((q) => {
        const n = depth(q);
        return h(
          'article',
          { class: `dlq-card${n > 0 ? ' has-messages' : ''}`, 'data-queue': q.QueueName },
          h(
            'header',
            {},
            h('a', { href: queueHref(q.QueueName, '', q.Region) }, q.QueueName),
            n > 0 ? badge(`${count(n)} message${n === 1 ? '' : 's'}`, 'danger') : badge('empty', 'ok'),
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
          n > 0
            ? h(
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
              )
            : null,
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

function renderTable(
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

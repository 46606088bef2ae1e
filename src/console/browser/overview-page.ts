import { badge, content, count, duration, errorText, h, queueHref, queueNameOf, replace, time } from './dom.js';
import { deadLetterTargetOf, loadQueueSummaries, type QueueSummary } from './queue-summaries.js';

const REFRESH_MS = 5_000;

type SortKey = 'name' | 'region' | 'type' | 'role' | 'visible' | 'inFlight' | 'delayed' | 'oldest';
const COLUMNS: [SortKey, string, boolean][] = [
  ['name', 'Name', false], ['region', 'Region', false], ['type', 'Type', false], ['role', 'Dead-letter role', false],
  ['visible', 'Visible', true], ['inFlight', 'In flight', true], ['delayed', 'Delayed', true], ['oldest', 'Oldest message', true],
];

const isSource = (q: QueueSummary) => Boolean(deadLetterTargetOf(q.RedrivePolicy)) || q.DeadLetterExchange !== undefined;
const role = (q: QueueSummary): string =>
  q.DeadLetterSourceQueueUrls.length > 0 && isSource(q) ? 'both' : q.DeadLetterSourceQueueUrls.length > 0 ? 'dlq' : isSource(q) ? 'source' : '';
const exchangeName = (x: string) => (x === '' ? '(default exchange)' : x);

const sortValue: Record<SortKey, (q: QueueSummary) => string | number> = {
  name: (q) => q.QueueName, region: (q) => q.Region, type: (q) => (q.FifoQueue ? 'fifo' : 'standard'), role,
  visible: (q) => q.ApproximateNumberOfMessages, inFlight: (q) => q.ApproximateNumberOfMessagesNotVisible,
  delayed: (q) => q.ApproximateNumberOfMessagesDelayed, oldest: (q) => q.ApproximateAgeOfOldestMessage ?? -1,
};

const depth = (q: QueueSummary) => q.ApproximateNumberOfMessages + q.ApproximateNumberOfMessagesNotVisible + q.ApproximateNumberOfMessagesDelayed;

/** Every queue of the account, in every region, the dead-letter relationships first; refreshed while open. */
export function overviewPage(): void {
  const params = new URLSearchParams(location.search);
  const state = {
    filter: params.get('q') ?? '',
    sort: (params.get('sort') as SortKey | null) ?? 'name',
    desc: params.get('dir') === 'desc',
    auto: params.get('refresh') !== 'off',
    queues: undefined as QueueSummary[] | undefined,
    updated: 0,
    error: '',
  };
  const filterInput = h('input', { type: 'search', placeholder: 'Filter by name', value: state.filter, 'aria-label': 'Filter queues by name' });
  const autoBox = h('input', { type: 'checkbox', checked: state.auto });
  const status = h('span', { class: 'muted', id: 'updated' });
  const relations = h('section', { id: 'dead-letter-map' });
  const table = h('div', { class: 'table-wrap' });
  replace(content(),
    h('div', { class: 'toolbar' }, filterInput, h('label', { class: 'inline' }, autoBox, ' Auto-refresh'), status, h('span', { class: 'spacer' }),
      h('a', { class: 'button', href: '/console/create-queue' }, 'Create queue')),
    relations, h('h2', {}, 'All queues'), table);

  const keepUrl = () => {
    const p = new URLSearchParams();
    if (state.filter) p.set('q', state.filter);
    if (state.sort !== 'name') p.set('sort', state.sort);
    if (state.desc) p.set('dir', 'desc');
    if (!state.auto) p.set('refresh', 'off');
    history.replaceState(null, "", `${location.pathname}${p.toString() ? `?${p}` : ""}`);
  };
  const render = () => {
    status.textContent = state.error ? `Refresh failed: ${state.error}` : state.updated ? `Updated ${time(state.updated).slice(11)}` : '';
    status.className = state.error ? 'error-text' : 'muted';
    if (!state.queues) return;
    renderRelations(relations, state.queues);
    renderTable(table, state, (key) => {
      state.desc = state.sort === key ? !state.desc : COLUMNS.find((c) => c[0] === key)![2];
      state.sort = key;
      keepUrl();
      render();
    });
  };
  filterInput.addEventListener('input', () => {
    state.filter = filterInput.value.trim();
    keepUrl();
    render();
  });
  autoBox.addEventListener('change', () => {
    state.auto = autoBox.checked;
    keepUrl();
  });
  const refresh = async () => {
    try {
      state.queues = await loadQueueSummaries();
      state.updated = Date.now();
      state.error = '';
    } catch (e) {
      state.error = errorText(e);
    }
    render();
  };
  void refresh();
  setInterval(() => {
    if (state.auto && document.visibilityState === 'visible') void refresh();
  }, REFRESH_MS);
}

function renderRelations(section: HTMLElement, queues: QueueSummary[]): void {
  const dlqs = queues.filter((q) => q.DeadLetterSourceQueueUrls.length > 0).sort((a, b) => depth(b) - depth(a) || a.QueueName.localeCompare(b.QueueName));
  if (dlqs.length === 0) {
    replace(section);
    return;
  }
  replace(section, h('h2', {}, 'Dead-letter queues'), h('div', { class: 'dlq-grid' }, dlqs.map((q) => {
    const n = depth(q);
    return h('article', { class: `dlq-card${n > 0 ? ' has-messages' : ''}`, 'data-queue': q.QueueName },
      h('header', {}, h('a', { href: queueHref(q.QueueName, '', q.Region) }, q.QueueName), n > 0 ? badge(`${count(n)} message${n === 1 ? '' : 's'}`, 'danger') : badge('empty', 'ok')),
      h('p', { class: 'feeds' }, h('span', { class: 'muted' }, 'fed by '),
        q.DeadLetterSourceQueueUrls.map((u, i) => {
          const source = queues.find((s) => s.QueueUrl === u);
          const via = source?.DeadLetterExchange !== undefined ? h('span', { class: 'muted via-exchange' }, ` via exchange ${exchangeName(source.DeadLetterExchange)}`) : null;
          return [i ? ', ' : '', h('a', { href: queueHref(queueNameOf(u), '', q.Region) }, queueNameOf(u)), via];
        })),
      n > 0 ? h('p', { class: 'card-links' },
        h('span', { class: 'muted' }, `oldest ${duration(q.ApproximateAgeOfOldestMessage)}`),
        h('a', { href: queueHref(q.QueueName, '/messages', q.Region) }, 'Browse'), h('a', { href: queueHref(q.QueueName, '/redrive', q.Region) }, 'Redrive')) : null);
  })));
}

function renderTable(wrap: HTMLElement, state: { filter: string; sort: SortKey; desc: boolean; queues?: QueueSummary[] }, onSort: (k: SortKey) => void): void {
  const all = state.queues!;
  if (all.length === 0) {
    replace(wrap, h('p', { class: 'empty' }, 'No queues yet. ', h('a', { href: '/console/create-queue' }, 'Create the first one'), '.'));
    return;
  }
  const needle = state.filter.toLowerCase();
  const value = sortValue[state.sort];
  const rows = all.filter((q) => q.QueueName.toLowerCase().includes(needle)).sort((a, b) => {
    const [x, y] = [value(a), value(b)];
    const c = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
    return (state.desc ? -c : c) || a.QueueName.localeCompare(b.QueueName);
  });
  const byArn = new Map(all.map((q) => [q.QueueArn, q.QueueName]));
  replace(wrap, h('table', { class: 'queues', id: 'queues-table' },
    h('thead', {}, h('tr', {}, COLUMNS.map(([key, label, numeric]) => h('th', {
      class: numeric ? 'num' : undefined, 'aria-sort': state.sort === key ? (state.desc ? 'descending' : 'ascending') : undefined,
    }, h('button', { type: 'button', class: 'sort', onclick: () => onSort(key) }, label, state.sort === key ? (state.desc ? ' ↓' : ' ↑') : ''))))),
    h('tbody', {}, rows.length === 0
      ? h('tr', {}, h('td', { colspan: COLUMNS.length, class: 'empty' }, `No queue name contains “${state.filter}”.`))
      : rows.map((q) => {
        const target = deadLetterTargetOf(q.RedrivePolicy);
        const isDlq = q.DeadLetterSourceQueueUrls.length > 0;
        return h('tr', { class: isDlq && depth(q) > 0 ? 'attention' : undefined, 'data-queue': q.QueueName },
          h('td', {}, h('a', { href: queueHref(q.QueueName, '', q.Region) }, q.QueueName)),
          h('td', {}, q.Region),
          h('td', {}, q.FifoQueue ? 'FIFO' : 'Standard'),
          h('td', {}, h('span', { class: 'roles' },
            isDlq ? badge('DLQ', depth(q) > 0 ? 'danger' : 'neutral', `Dead-letter queue of ${q.DeadLetterSourceQueueUrls.map(queueNameOf).join(', ')}`) : null,
            target ? h('span', { class: 'feeds-into' }, badge('source', 'info'), ' → ',
              h('a', { href: queueHref(byArn.get(target.arn) ?? queueNameOf(target.arn), '', q.Region) }, queueNameOf(target.arn)),
              h('span', { class: 'muted' }, ` after ${target.maxReceiveCount}${q.RedrivePolicySource?.startsWith('policy:') ? ` (policy ${q.RedrivePolicySource.slice(7)})` : ''}`)) : null,
            q.DeadLetterExchange !== undefined ? h('span', { class: 'feeds-into via-exchange' }, badge('source', 'info'), ' → ',
              h('span', { class: 'exchange', title: 'AMQP dead-letter exchange' }, `exchange ${exchangeName(q.DeadLetterExchange)}`),
              q.DeadLetterRoutingKey !== undefined ? h('span', { class: 'muted' }, ` (key ${q.DeadLetterRoutingKey})`) : null, ' → ',
              (q.DeadLetterTargetQueueNames ?? []).length === 0 ? h('span', { class: 'muted' }, 'no queue bound')
                : (q.DeadLetterTargetQueueNames ?? []).map((n, i) => [i ? ', ' : '', h('a', { href: queueHref(n, '', q.Region) }, n)])) : null)),
          h('td', { class: 'num' }, count(q.ApproximateNumberOfMessages)),
          h('td', { class: 'num' }, count(q.ApproximateNumberOfMessagesNotVisible)),
          h('td', { class: 'num' }, count(q.ApproximateNumberOfMessagesDelayed)),
          h('td', { class: 'num' }, duration(q.ApproximateAgeOfOldestMessage)));
      }))));
}

import { content, errorText, h, replace, time } from './dom.js';
import { call } from './api.js';
import {
  COLUMNS,
  type Overview,
  PAGE_SIZES,
  renderPager,
  renderRelations,
  renderTable,
  type SortKey,
} from './overview-view.js';

const REFRESH_MS = 5_000;
/**
 * Refreshes are spaced at least this many times the last one's duration, so an idle tab
 * costs the server at most about 1% of a core however many queues the account has.
 */
const REFRESH_COST_RATIO = 100;
/** ... but never less often than this. */
const REFRESH_MAX_MS = 60_000;
/** Typing in the filter asks the server once the typing pauses. */
const FILTER_DELAY_MS = 250;

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

const SHOW: [string, string][] = [
  ['', 'All queues'],
  ['WithMessages', 'With messages'],
  ['DeadLetterQueues', 'Dead-letter queues'],
  ['DeadLetterQueuesWithMessages', 'Dead-letter queues with messages'],
];

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

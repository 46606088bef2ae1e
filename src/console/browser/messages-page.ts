import { peek, type PeekedMessage } from './api.js';
import { confirmAction } from './dialog.js';
import { badge, content, count, errorText, flash, h, mainData, queueHref, replace, time, withQuery } from './dom.js';
import { downloadJsonLines } from './export.js';
import { deleteMessagesById } from './extensions.js';
import { arnFor, loadPageQueue } from './queue-info.js';
import { filterFields, filterFrom, filterParams } from './search-filter.js';
import { matchCount, moveSelectedButton } from './message-actions.js';

/** Requests a search makes at most per page view: PeekMessages examines 1,000 messages each. */
const SEARCH_REQUESTS = 5;

export const stateBadge = (state: string) =>
  badge(state.replace('_', ' ').toLowerCase(), state === 'VISIBLE' ? 'ok' : state === 'IN_FLIGHT' ? 'warn' : 'neutral');

/**
 * Browses a queue with PeekMessages, which receives nothing: receive counts, visibility
 * and receipts stay as they are. The server applies the search (PeekMessages' Filter,
 * the same filter as selective redrive); the page's place and search are in its URL.
 */
export async function messagesPage(): Promise<void> {
  const name = mainData('queue');
  const params = new URLSearchParams(location.search);
  const from = params.get('from') ?? undefined;
  const size = Number(params.get('size') ?? 25);
  const q = await loadPageQueue(name);
  if (!q) return;
  const filter = filterFrom(params, (n) => arnFor(q, n));
  // A search may examine a stretch of the queue with few matches: ask again from where
  // it stopped until the page is full or the search has gone far enough for one view.
  const messages: PeekedMessage[] = [];
  let next = from;
  for (let i = 0; i < (filter ? SEARCH_REQUESTS : 1); i++) {
    const out = await peek(q.url, size - messages.length, next, filter);
    messages.push(...(out.Messages ?? []));
    next = out.NextToken;
    if (!next || messages.length >= size) break;
  }
  const selectedIds = new Set<string>();
  const link = (over: Record<string, string | undefined>) => {
    const p = new URLSearchParams(params);
    for (const [k, v] of Object.entries(over))
      if (v === undefined) p.delete(k);
      else p.set(k, v);
    return `${location.pathname}?${p}`;
  };

  const sizeSelect = h(
    'select',
    { name: 'size', 'aria-label': 'Page size' },
    [25, 50, 100].map((n) => h('option', { value: n, selected: n === size }, `${n} per page`)),
  );
  const searchForm = h(
    'form',
    { class: 'search', method: 'get', id: 'search' },
    h(
      'fieldset',
      { class: 'search-fields' },
      h('legend', {}, filter ? 'Search (filtered by the server)' : 'Search'),
      filterFields(params, q.sources, q.sources.length > 0),
    ),
    // A search stays in the page's region (the form replaces the query).
    params.get('region') ? h('input', { type: 'hidden', name: 'region', value: params.get('region')! }) : null,
    h(
      'div',
      { class: 'toolbar' },
      sizeSelect,
      h('button', { type: 'submit' }, 'Search'),
      filter ? h('a', { href: queueHref(name, '/messages') }, 'Clear') : null,
      filter && q.sources.length
        ? h(
            'a',
            { href: withQuery(queueHref(name, '/redrive'), String(filterParams(params))), id: 'redrive-these' },
            'Redrive these…',
          )
        : null,
      h('span', { class: 'spacer' }),
      h('button', { type: 'button', id: 'export-selected', onclick: () => exportChosen(true) }, 'Export selected'),
      h('button', { type: 'button', id: 'export-page', onclick: () => exportChosen(false) }, 'Export page'),
      moveSelectedButton(q, () => [...selectedIds]),
      h(
        'button',
        { type: 'button', id: 'delete-selected', class: 'danger', onclick: () => void deleteChosen() },
        'Delete selected…',
      ),
    ),
  );
  const exportChosen = (onlySelected: boolean) => {
    const chosen = onlySelected ? messages.filter((m) => selectedIds.has(m.MessageId)) : messages;
    if (chosen.length === 0) return flash('Select messages to export first.', 'error');
    downloadJsonLines(name, chosen);
  };
  const deleteChosen = async () => {
    const ids = [...selectedIds];
    if (ids.length === 0) return flash('Select messages to delete first.', 'error');
    if (
      !(await confirmAction(
        `Delete ${ids.length} messages?`,
        `This deletes ${ids.length} selected messages from ${name}, in flight or not. It cannot be undone.`,
        `Delete ${ids.length}`,
      ))
    )
      return;
    try {
      const out = await deleteMessagesById(q.url, ids);
      flash(
        `Deleted ${out.Successful.length} of ${ids.length}.${out.Failed.length ? ` ${out.Failed[0]!.Message}` : ''}`,
        out.Failed.length ? 'error' : 'notice',
      );
      setTimeout(() => location.reload(), 600);
    } catch (e) {
      flash(errorText(e), 'error');
    }
  };

  const all = h('input', { type: 'checkbox', 'aria-label': 'Select all on this page' });
  const boxes: HTMLInputElement[] = [];
  all.addEventListener('change', () =>
    boxes.forEach((b) => {
      b.checked = all.checked;
      b.dispatchEvent(new Event('change'));
    }),
  );
  const row = (m: PeekedMessage) => {
    const box = h('input', { type: 'checkbox', 'aria-label': `Select ${m.MessageId}` });
    box.addEventListener('change', () =>
      box.checked ? selectedIds.add(m.MessageId) : selectedIds.delete(m.MessageId),
    );
    boxes.push(box);
    const last = m.LastDeath;
    return h(
      'tr',
      { 'data-message-id': m.MessageId },
      h('td', {}, box),
      h(
        'td',
        {},
        h(
          'a',
          {
            href: withQuery(
              queueHref(name, `/messages/${encodeURIComponent(m.MessageId)}`),
              from ? `from=${encodeURIComponent(from)}` : '',
            ),
            class: 'mono',
          },
          m.MessageId,
        ),
      ),
      h('td', {}, time(m.Attributes.SentTimestamp)),
      h('td', { class: 'num' }, count(m.Attributes.ApproximateReceiveCount)),
      h('td', {}, stateBadge(m.State)),
      h(
        'td',
        {},
        last
          ? [
              badge(last.reason, last.reason === 'rejected' ? 'danger' : 'warn'),
              ' ',
              h('span', { class: 'muted' }, `in ${last.queue}`),
            ]
          : h('span', { class: 'muted' }, '–'),
      ),
      h('td', { class: 'body-preview mono' }, m.Body.length > 90 ? `${m.Body.slice(0, 90)}…` : m.Body),
    );
  };
  replace(
    content(),
    h(
      'p',
      { class: 'muted' },
      'Browsing is read-only: it receives nothing, so no receive count, visibility or receive time changes.',
    ),
    searchForm,
    filter ? matchCount(q, filter) : null,
    messages.length === 0
      ? h(
          'p',
          { class: 'empty', id: 'no-match' },
          filter
            ? next
              ? 'No match in the messages searched so far.'
              : 'No message matches.'
            : from
              ? 'No more messages.'
              : 'This queue is empty.',
        )
      : h(
          'div',
          { class: 'table-wrap' },
          h(
            'table',
            { class: 'messages', id: 'messages-table' },
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                h('th', {}, all),
                h('th', {}, 'Message id'),
                h('th', {}, 'Sent'),
                h('th', { class: 'num' }, 'Receives'),
                h('th', {}, 'State'),
                h('th', {}, 'Last death'),
                h('th', {}, 'Body'),
              ),
            ),
            h('tbody', {}, messages.map(row)),
          ),
        ),
    h(
      'nav',
      { class: 'pager' },
      from ? h('a', { href: link({ from: undefined }), class: 'button' }, '⇤ First page') : null,
      next
        ? h(
            'a',
            { href: link({ from: next }), class: 'button', id: 'next-page' },
            filter ? 'Search further →' : 'Next page →',
          )
        : null,
    ),
  );
}

import { peek, type PeekedMessage } from './api.js';
import { confirmAction } from './dialog.js';
import { badge, content, count, flash, h, mainData, queueHref, replace, time } from './dom.js';
import { downloadJsonLines } from './export.js';
import { canDeleteById, deleteMessagesById } from './extensions.js';
import { loadPageQueue } from './queue-info.js';

const REASONS = ['delivery_limit', 'rejected', 'expired', 'maxlen'];

export const stateBadge = (state: string) => badge(state.replace('_', ' ').toLowerCase(), state === 'VISIBLE' ? 'ok' : state === 'IN_FLIGHT' ? 'warn' : 'neutral');

/**
 * Browses a queue with PeekMessages, which receives nothing: receive counts, visibility
 * and receipts stay as they are. The page's place is in its URL (`?from=<token>`).
 */
export async function messagesPage(): Promise<void> {
  const name = mainData('queue');
  const params = new URLSearchParams(location.search);
  const from = params.get('from') ?? undefined;
  const size = Number(params.get('size') ?? 25);
  const search = params.get('q') ?? '';
  const reason = params.get('reason') ?? '';
  const q = await loadPageQueue(name);
  if (!q) return;
  const filter = search || reason ? { BodyContains: search || undefined, DeathReason: reason || undefined } : undefined;
  // The filter goes to the server (PeekMessages' Filter) and is applied here too, so the
  // page is right whether or not the server filters.
  const out = await peek(q.url, size, from, filter);
  const messages = (out.Messages ?? []).filter((m) => (!search || m.Body.includes(search)) && (!reason || m.DeathHistory?.some((d) => d.reason === reason)));
  const selectedIds = new Set<string>();
  const link = (over: Record<string, string | undefined>) => {
    const p = new URLSearchParams({ ...Object.fromEntries(params), ...Object.fromEntries(Object.entries(over).filter(([, v]) => v !== undefined)) as Record<string, string> });
    for (const [k, v] of Object.entries(over)) if (v === undefined) p.delete(k);
    return `${location.pathname}?${p}`;
  };

  const searchInput = h('input', { type: 'search', name: 'q', value: search, placeholder: 'Body contains…', 'aria-label': 'Body contains' });
  const reasonSelect = h('select', { name: 'reason', 'aria-label': 'Death reason' }, h('option', { value: '' }, 'any death reason'),
    REASONS.map((r) => h('option', { value: r, selected: r === reason }, r)));
  const sizeSelect = h('select', { name: 'size', 'aria-label': 'Page size' }, [25, 50, 100].map((n) => h('option', { value: n, selected: n === size }, `${n} per page`)));
  const searchForm = h('form', { class: 'toolbar', method: 'get' }, searchInput, reasonSelect, sizeSelect, h('button', { type: 'submit' }, 'Search'),
    search || reason ? h('a', { href: location.pathname }, 'Clear') : null, h('span', { class: 'spacer' }),
    h('button', { type: 'button', id: 'export-selected', onclick: () => exportChosen(true) }, 'Export selected'),
    h('button', { type: 'button', id: 'export-page', onclick: () => exportChosen(false) }, 'Export page'),
    h('button', { type: 'button', id: 'delete-selected', class: 'danger hidden', onclick: () => void deleteChosen() }, 'Delete selected…'));
  const exportChosen = (onlySelected: boolean) => {
    const chosen = onlySelected ? messages.filter((m) => selectedIds.has(m.MessageId)) : messages;
    if (chosen.length === 0) return flash('Select messages to export first.', 'error');
    downloadJsonLines(name, chosen);
  };
  const deleteChosen = async () => {
    const ids = [...selectedIds];
    if (ids.length === 0) return flash('Select messages to delete first.', 'error');
    if (!(await confirmAction(`Delete ${ids.length} messages?`, `This deletes ${ids.length} selected messages from ${name}. It cannot be undone.`, `Delete ${ids.length}`))) return;
    let done = 0;
    for (let i = 0; i < ids.length; i += 10) done += (await deleteMessagesById(q.url, ids.slice(i, i + 10)))?.Successful.length ?? 0;
    flash(`Deleted ${done} of ${ids.length}.`);
    setTimeout(() => location.reload(), 600);
  };
  void canDeleteById(q.url).then((yes) => yes && document.getElementById('delete-selected')?.classList.remove('hidden'));

  const all = h('input', { type: 'checkbox', 'aria-label': 'Select all on this page' });
  const boxes: HTMLInputElement[] = [];
  all.addEventListener('change', () => boxes.forEach((b) => { b.checked = all.checked; b.dispatchEvent(new Event('change')); }));
  const row = (m: PeekedMessage) => {
    const box = h('input', { type: 'checkbox', 'aria-label': `Select ${m.MessageId}` });
    box.addEventListener('change', () => (box.checked ? selectedIds.add(m.MessageId) : selectedIds.delete(m.MessageId)));
    boxes.push(box);
    const last = m.LastDeath;
    return h('tr', { 'data-message-id': m.MessageId },
      h('td', {}, box),
      h('td', {}, h('a', { href: `${queueHref(name, `/messages/${encodeURIComponent(m.MessageId)}`)}${from ? `?from=${encodeURIComponent(from)}` : ''}`, class: 'mono' }, m.MessageId)),
      h('td', {}, time(m.Attributes.SentTimestamp)),
      h('td', { class: 'num' }, count(m.Attributes.ApproximateReceiveCount)),
      h('td', {}, stateBadge(m.State)),
      h('td', {}, last ? [badge(last.reason, last.reason === 'rejected' ? 'danger' : 'warn'), ' ', h('span', { class: 'muted' }, `in ${last.queue}`)] : h('span', { class: 'muted' }, '–')),
      h('td', { class: 'body-preview mono' }, m.Body.length > 90 ? `${m.Body.slice(0, 90)}…` : m.Body));
  };
  replace(content(),
    h('p', { class: 'muted' }, 'Browsing is read-only: it receives nothing, so no receive count, visibility or receive time changes.'),
    searchForm,
    messages.length === 0
      ? h('p', { class: 'empty' }, filter ? 'No message on this page matches.' : from ? 'No more messages.' : 'This queue is empty.')
      : h('div', { class: 'table-wrap' }, h('table', { class: 'messages', id: 'messages-table' },
        h('thead', {}, h('tr', {}, h('th', {}, all), h('th', {}, 'Message id'), h('th', {}, 'Sent'), h('th', { class: 'num' }, 'Receives'),
          h('th', {}, 'State'), h('th', {}, 'Last death'), h('th', {}, 'Body'))),
        h('tbody', {}, messages.map(row)))),
    h('nav', { class: 'pager' },
      from ? h('a', { href: link({ from: undefined }), class: 'button' }, '⇤ First page') : null,
      out.NextToken ? h('a', { href: link({ from: out.NextToken }), class: 'button', id: 'next-page' }, 'Next page →') : null));
}

import { call, queueAttributes } from './api.js';
import { attributesForm } from './attributes-form.js';
import { activityChart, chartLegend } from './chart.js';
import { confirmAction } from './dialog.js';
import {
  badge,
  content,
  count,
  errorText,
  facts,
  flash,
  h,
  mainData,
  perSecond,
  queueHref,
  queueNameOf,
  replace,
  time,
} from './dom.js';
import { activityTotals } from '../../wire/activity.js';
import { deadLetterBreakdown, queueActivity, type Breakdown } from './extensions.js';
import type { Rates } from './queue-summaries.js';
import { depthOf, loadPageQueue, loadQueue, showBadges, type QueueInfo } from './queue-info.js';
import { releaseDeliveries } from './release-deliveries.js';
import { sendForm } from './send-form.js';
import { queueClients } from './queue-clients.js';

/** One queue: counts, dead-letter relations, activity, settings, send, purge and delete. */
export async function queuePage(): Promise<void> {
  const name = mainData('queue');
  const loaded = await loadPageQueue(name);
  if (!loaded) return;
  let q = loaded;
  const stats = h('div', { class: 'stats', id: 'stats' });
  const showStats = (a: Record<string, string>) =>
    replace(
      stats,
      stat('Visible', a.ApproximateNumberOfMessages),
      stat('In flight', a.ApproximateNumberOfMessagesNotVisible),
      stat('Delayed', a.ApproximateNumberOfMessagesDelayed),
      h('a', { class: 'button', href: queueHref(name, '/messages') }, 'Browse messages'),
      q.sources.length ? h('a', { class: 'button', href: queueHref(name, '/redrive') }, 'Redrive…') : null,
    );
  showStats(q.attributes);
  const refresh = async () => {
    q = await loadQueue(name);
    showStats(q.attributes);
    showBadges(q);
  };

  const activity = h('section', { class: 'hidden', id: 'activity' });
  const breakdown = h('section', { class: 'hidden', id: 'breakdown' });
  const form = await attributesForm({
    current: q.attributes,
    self: name,
    fifo: q.fifo,
    submitLabel: 'Save settings',
    onSubmit: async (changed) => {
      if (Object.keys(changed).length) await call('SetQueueAttributes', { QueueUrl: q.url, Attributes: changed });
      await refresh();
    },
  });
  replace(
    content(),
    stats,
    relations(q),
    breakdown,
    activity,
    queueClients(name),
    h(
      'div',
      { class: 'columns' },
      h('section', {}, h('h2', {}, 'Settings'), form),
      h(
        'div',
        {},
        h(
          'section',
          {},
          h('h2', {}, 'Send a message'),
          sendForm(q, () => void refresh()),
        ),
        h(
          'section',
          {},
          h('h2', {}, 'Details'),
          facts([
            ['ARN', h('code', {}, q.arn)],
            ['URL', h('code', {}, q.url)],
            ['Created', time(Number(q.attributes.CreatedTimestamp) * 1000)],
            ['Last modified', time(Number(q.attributes.LastModifiedTimestamp) * 1000)],
          ]),
        ),
        releaseDeliveries(() => void refresh()),
        h(
          'section',
          { class: 'danger-zone' },
          h('h2', {}, 'Danger zone'),
          h(
            'p',
            {},
            h(
              'button',
              { type: 'button', class: 'danger', id: 'purge', onclick: () => void purge(q, refresh) },
              'Purge messages…',
            ),
            ' ',
            h(
              'button',
              { type: 'button', class: 'danger', id: 'delete-queue', onclick: () => void deleteQueue(q) },
              'Delete queue…',
            ),
          ),
        ),
      ),
    ),
  );
  void showExtras(q, breakdown, activity);
}

function stat(label: string, value: string | undefined): HTMLElement {
  return h(
    'div',
    { class: 'stat' },
    h('span', { class: 'value' }, count(value ?? 0)),
    h('span', { class: 'label' }, label),
  );
}

function relations(q: QueueInfo): HTMLElement | null {
  const dlx = q.attributes.RedriveDeadLetterExchange;
  if (!q.target && !q.sources.length && dlx === undefined) return null;
  const key = q.attributes.RedriveDeadLetterRoutingKey;
  return h(
    'section',
    { class: 'relations' },
    dlx !== undefined
      ? h(
          'p',
          { id: 'dead-letter-exchange' },
          'Messages it dead-letters (AMQP) are published to exchange ',
          h('code', {}, dlx === '' ? '(default)' : dlx),
          key !== undefined ? [' with routing key ', h('code', {}, key)] : ' with their own routing keys',
          '.',
        )
      : null,
    q.target
      ? h(
          'p',
          {},
          'Messages received more than ',
          h('strong', {}, String(q.target.maxReceiveCount)),
          ' times are moved to ',
          h('a', { href: queueHref(queueNameOf(q.target.arn)) }, queueNameOf(q.target.arn)),
          '.',
        )
      : null,
    q.sources.length
      ? h(
          'p',
          {},
          'Dead-letter queue of ',
          q.sources.map((u, i) => [i ? ', ' : '', h('a', { href: queueHref(queueNameOf(u)) }, queueNameOf(u))]),
          '.',
          depthOf(q.attributes) > 0 ? [' ', badge(`${count(depthOf(q.attributes))} to look at`, 'danger')] : null,
        )
      : null,
  );
}

/** The dead-letter breakdown (on a DLQ) and the last hour's activity. */
async function showExtras(q: QueueInfo, breakdownEl: HTMLElement, activityEl: HTMLElement): Promise<void> {
  try {
    const [b, a] = await Promise.all([q.sources.length ? deadLetterBreakdown(q.url) : undefined, queueActivity(q.url)]);
    if (b) {
      breakdownEl.classList.remove('hidden');
      const table = (
        id: string,
        title: string,
        rows: { key: string; Count: number; OldestTimestamp: number; NewestTimestamp: number }[],
      ) =>
        h(
          'table',
          { id },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              h('th', {}, title),
              h('th', { class: 'num' }, 'Messages'),
              h('th', {}, 'Oldest'),
              h('th', {}, 'Newest'),
            ),
          ),
          h(
            'tbody',
            {},
            rows.map((r) =>
              h(
                'tr',
                { 'data-key': r.key },
                h('td', {}, r.key),
                h('td', { class: 'num' }, count(r.Count)),
                h('td', {}, time(r.OldestTimestamp)),
                h('td', {}, time(r.NewestTimestamp)),
              ),
            ),
          ),
        );
      replace(
        breakdownEl,
        h('h2', {}, 'Why messages are here'),
        b.BySource.length === 0
          ? h('p', { class: 'empty' }, 'No dead-lettered message is here.')
          : h(
              'div',
              { class: 'columns wide-tables' },
              table(
                'by-source',
                'Died in',
                b.BySource.map((r) => ({ ...r, key: queueNameOf(r.SourceArn) })),
              ),
              table(
                'by-reason',
                'Reason',
                b.ByReason.map((r) => ({ ...r, key: r.Reason })),
              ),
            ),
        rejections(b),
      );
    }
    activityEl.classList.remove('hidden');
    replace(
      activityEl,
      h('h2', {}, 'Last hour'),
      rates(a.Rates, q.sources.length > 0),
      activityChart(a.Minutes),
      chartLegend(),
      h('p', { class: 'muted', id: 'activity-totals' }, activityTotals(a.Minutes)),
    );
  } catch (e) {
    flash(errorText(e), 'error');
  }
}

/** Messages per second over the last minute (docs/monitoring.md, "Rates"). */
function rates(r: Rates, isDlq: boolean): HTMLElement {
  const tile = (label: string, value: number, tone = '') =>
    h(
      'div',
      { class: `stat rate${tone}`, title: `Messages ${label} per second over the last minute` },
      h('span', { class: 'value' }, perSecond(value)),
      h('span', { class: 'label' }, `${label}/s`),
    );
  return h(
    'div',
    { class: 'stats rates', id: 'rates' },
    tile('sent', r.Sent),
    tile('received', r.Received),
    tile('deleted', r.Deleted),
    tile('dead-lettered', r.DeadLettered, r.DeadLettered > 0 ? ' danger' : ''),
    isDlq || r.DeadLetterArrivals > 0 ? tile('arrived dead-lettered', r.DeadLetterArrivals) : null,
    h('span', { class: 'muted' }, 'over the last minute'),
  );
}

/** The consumers' own words: the texts most often given when rejecting the messages here. */
function rejections(b: Breakdown): HTMLElement | null {
  const rows = b.ByRejectionReason ?? [];
  if (rows.length === 0) return null;
  return h(
    'div',
    { id: 'rejection-reasons' },
    h('h3', {}, 'Top rejection reasons'),
    h(
      'table',
      {},
      h('thead', {}, h('tr', {}, h('th', {}, 'Rejected with'), h('th', { class: 'num' }, 'Messages'))),
      h(
        'tbody',
        {},
        rows.map((r) =>
          h(
            'tr',
            {},
            h('td', {}, r.Reason === '' ? h('span', { class: 'muted' }, '(no reason given)') : h('q', {}, r.Reason)),
            h('td', { class: 'num' }, count(r.Count)),
          ),
        ),
      ),
    ),
    b.RejectionReasonsComplete
      ? null
      : h(
          'p',
          { class: 'muted' },
          `Counted over the first ${count(b.RejectionReasonsExamined ?? 0)} messages of the queue.`,
        ),
  );
}

async function purge(q: QueueInfo, refresh: () => Promise<void>): Promise<void> {
  const n = count(depthOf(await queueAttributes(q.url)));
  if (
    !(await confirmAction(
      `Purge ${q.name}?`,
      `This deletes all ${n} messages in ${q.name}, including those in flight. It cannot be undone.`,
      `Purge ${n} messages`,
    ))
  )
    return;
  try {
    await call('PurgeQueue', { QueueUrl: q.url });
    flash(`Purged ${q.name}.`);
    await refresh();
  } catch (e) {
    flash(errorText(e), 'error');
  }
}

async function deleteQueue(q: QueueInfo): Promise<void> {
  if (
    !(await confirmAction(
      `Delete ${q.name}?`,
      `This deletes the queue ${q.name} and its ${count(depthOf(q.attributes))} messages. It cannot be undone.`,
      'Delete queue',
    ))
  )
    return;
  try {
    await call('DeleteQueue', { QueueUrl: q.url });
    location.assign('/console/queues');
  } catch (e) {
    flash(errorText(e), 'error');
  }
}

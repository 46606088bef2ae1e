import { call, queueAttributes } from './api.js';
import { confirmAction } from './dialog.js';
import {
  badge,
  content,
  count,
  duration,
  errorText,
  facts,
  flash,
  h,
  mainData,
  queueHref,
  queueNameOf,
  replace,
  time,
} from './dom.js';
import { cancelMove, listMoves, previewMove, startMove, type MoveRequest, type MoveTask } from './move-tasks.js';
import { arnFor, loadPageQueue, type QueueInfo } from './queue-info.js';
import { filterFields, filterFrom } from './search-filter.js';
import { filterText } from '../../wire/move-tasks.js';

const FAST_POLL_MS = 1_000;
const SLOW_POLL_MS = 5_000;

/** Redrive out of a dead-letter queue: preview (DryRun), start, and follow the move tasks. */
export async function redrivePage(): Promise<void> {
  const name = mainData('queue');
  const q = await loadPageQueue(name);
  if (!q) return;
  if (!q.sources.length) {
    replace(
      content(),
      h(
        'p',
        { class: 'empty' },
        `No queue uses ${name} as its dead-letter queue, so there is nothing to redrive. `,
        'Give a source queue a dead-letter queue on its ',
        h('a', { href: queueHref(name) }, 'settings'),
        '.',
      ),
    );
    return;
  }
  const tasks = h('section', { id: 'tasks' }, h('h2', {}, 'Move tasks'), h('p', { class: 'muted' }, 'Loading…'));
  const form = redriveForm(q, () => void poll());
  replace(content(), h('div', { class: 'columns' }, h('section', {}, h('h2', {}, 'Start a redrive'), form), tasks));

  let timer: ReturnType<typeof setTimeout> | undefined;
  const poll = async () => {
    clearTimeout(timer);
    let running = false;
    try {
      const list = await listMoves(q.arn);
      running = list.some((t) => t.Status === 'RUNNING');
      renderTasks(tasks, list, () => void poll());
    } catch (e) {
      flash(errorText(e), 'error');
    }
    timer = setTimeout(() => void poll(), running ? FAST_POLL_MS : SLOW_POLL_MS);
  };
  void poll();
}

/** Suggestions under the destination box: this many names that contain what was typed. */
const SUGGESTIONS = 20;
const SUGGEST_DELAY_MS = 200;

/**
 * The destination queue: a search box whose suggestions the server finds (ListQueueSummaries
 * by part of the name, of the same type), so an account of 100,000 queues is not one list.
 */
function destinationBox(q: QueueInfo, chosen: () => void): [HTMLInputElement, HTMLDataListElement] {
  const list = h('datalist', { id: 'destination-suggestions' });
  const box = h('input', {
    type: 'search',
    name: 'destinationQueue',
    list: 'destination-suggestions',
    placeholder: 'type part of a name',
    autocomplete: 'off',
    'aria-label': 'Destination queue',
  });
  let typing: ReturnType<typeof setTimeout> | undefined;
  box.addEventListener('input', () => {
    chosen();
    clearTimeout(typing);
    typing = setTimeout(async () => {
      const text = box.value.trim();
      const found = await call<{ Queues: { QueueName: string }[] }>('ListQueueSummaries', {
        NameContains: text,
        QueueType: q.fifo ? 'fifo' : 'standard',
        MaxResults: SUGGESTIONS + 1,
      }).catch(() => ({ Queues: [] }));
      replace(
        list,
        found.Queues.filter((s) => s.QueueName !== q.name)
          .slice(0, SUGGESTIONS)
          .map((s) => h('option', { value: s.QueueName })),
      );
    }, SUGGEST_DELAY_MS);
  });
  return [box, list];
}

function redriveForm(q: QueueInfo, started: () => void): HTMLFormElement {
  const input = (name: string, attrs: Record<string, string | number | boolean> = {}) => h('input', { name, ...attrs });
  const toSource = h('input', { type: 'radio', name: 'destination', value: 'source', checked: true });
  const toQueue = h('input', { type: 'radio', name: 'destination', value: 'queue' });
  const [destination, suggestions] = destinationBox(q, () => (toQueue.checked = true));
  const preview = h('p', { class: 'preview', id: 'preview', 'aria-live': 'polite' });
  const form = h(
    'form',
    { class: 'redrive' },
    h(
      'fieldset',
      {},
      h('legend', {}, 'Destination'),
      h('label', { class: 'inline' }, toSource, ' Back to the queue each message died in'),
      h(
        'label',
        { class: 'inline' },
        toQueue,
        ' To another ',
        q.fifo ? 'FIFO' : 'standard',
        ' queue: ',
        destination,
        suggestions,
      ),
    ),
    h(
      'fieldset',
      {},
      h('legend', {}, 'Only messages that… (optional)'),
      filterFields(new URLSearchParams(location.search), q.sources),
    ),
    h(
      'fieldset',
      {},
      h('legend', {}, 'Speed'),
      h(
        'label',
        {},
        h('span', { class: 'label' }, 'At most (messages per second)'),
        input('rate', { type: 'number', min: 1, max: 500, placeholder: 'no limit' }),
        h('small', { class: 'hint' }, '1 to 500; empty moves batches of 100 back to back'),
      ),
    ),
    preview,
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'button', id: 'preview-button', onclick: () => void run(true) }, 'Preview'),
      h('button', { type: 'submit', class: 'primary', id: 'start-button' }, 'Start redrive'),
    ),
  );
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void run(false);
  });

  const request = (): MoveRequest => {
    const values = new URLSearchParams();
    for (const [k, v] of new FormData(form)) values.append(k, String(v));
    const rate = values.get('rate');
    return {
      SourceArn: q.arn,
      DestinationArn: toQueue.checked ? arnFor(q, destination.value.trim()) : undefined,
      MaxNumberOfMessagesPerSecond: rate ? Number(rate) : undefined,
      Filter: filterFrom(values, (n) => arnFor(q, n)),
    };
  };
  const where = () => (toQueue.checked ? `to ${destination.value.trim()}` : 'back to the queues they died in');
  const run = async (dryRun: boolean) => {
    // Else an empty box would send no destination, which means back to the sources.
    if (toQueue.checked && !destination.value.trim()) {
      preview.textContent = 'Name the queue to move the messages to.';
      preview.className = 'preview error';
      return;
    }
    try {
      const req = request();
      const { n, atLeast } = await previewMove(req);
      const total = Number((await queueAttributes(q.url)).ApproximateNumberOfMessages ?? 0);
      preview.textContent = `${atLeast ? 'At least ' : ''}${count(n)} of ${count(total)} visible messages would move ${where()}${req.Filter ? ' (filtered)' : ''}.`;
      preview.className = 'preview notice';
      if (dryRun) return;
      if (n === 0) return flash('No message matches: nothing to redrive.', 'error');
      if (
        !(await confirmAction(
          'Start the redrive?',
          `Move ${count(n)} messages from ${q.name} ${where()}${req.MaxNumberOfMessagesPerSecond ? `, at most ${req.MaxNumberOfMessagesPerSecond} per second` : ''}.`,
          `Move ${count(n)} messages`,
        ))
      )
        return;
      await startMove(req);
      flash('Redrive started.');
      started();
    } catch (e) {
      preview.textContent = errorText(e);
      preview.className = 'preview error';
    }
  };
  return form;
}

const TONE = { RUNNING: 'info', COMPLETED: 'ok', CANCELLING: 'warn', CANCELLED: 'neutral', FAILED: 'danger' } as const;

function renderTasks(section: HTMLElement, list: MoveTask[], changed: () => void): void {
  replace(
    section,
    h('h2', {}, 'Move tasks'),
    list.length === 0
      ? h('p', { class: 'empty' }, 'No redrive has run on this queue yet.')
      : h(
          'ol',
          { class: 'tasks' },
          list.map((t) => {
            const total = t.ApproximateNumberOfMessagesToMove;
            const moved = t.ApproximateNumberOfMessagesMoved;
            // The first batch goes at once, so a young task's average overstates its rate; the
            // server never goes faster than the limit.
            const elapsed = Math.max(1, (Date.now() - t.StartedTimestamp) / 1000);
            const rate = Math.min(moved / elapsed, t.MaxNumberOfMessagesPerSecond ?? Infinity);
            const left = total !== undefined && rate > 0 ? (total - moved) / rate : undefined;
            const pct = total ? Math.min(100, Math.round((moved / total) * 100)) : t.Status === 'COMPLETED' ? 100 : 0;
            return h(
              'li',
              { class: `task ${t.Status.toLowerCase()}`, 'data-status': t.Status },
              h(
                'div',
                { class: 'task-head' },
                badge(t.Status.toLowerCase(), TONE[t.Status]),
                h(
                  'span',
                  { class: 'task-progress-text' },
                  `moved ${count(moved)} of ${total === undefined ? '?' : count(total)}`,
                ),
                h('span', { class: 'muted' }, `started ${time(t.StartedTimestamp)}`),
                t.Status === 'RUNNING' && t.TaskHandle
                  ? h(
                      'button',
                      { type: 'button', class: 'danger small', onclick: () => void cancel(t.TaskHandle!, changed) },
                      'Cancel',
                    )
                  : null,
              ),
              h('progress', { max: 100, value: pct, 'aria-label': 'Progress' }),
              facts([
                [
                  'Destination',
                  t.DestinationArn
                    ? h('a', { href: queueHref(queueNameOf(t.DestinationArn)) }, queueNameOf(t.DestinationArn))
                    : 'each message’s source',
                ],
                ...(t.Status === 'RUNNING'
                  ? ([
                      [
                        'Rate',
                        `${rate.toFixed(1)}/s${t.MaxNumberOfMessagesPerSecond ? ` (limit ${t.MaxNumberOfMessagesPerSecond}/s)` : ''}`,
                      ],
                      ['Time left', duration(left)],
                    ] as [string, string][])
                  : []),
                ...(t.Filter
                  ? ([['Filter', h('code', { class: 'task-filter' }, filterText(t.Filter))]] as [string, HTMLElement][])
                  : []),
                ...(t.FailureReason
                  ? ([['Failure', h('span', { class: 'error-text' }, t.FailureReason)]] as [string, HTMLElement][])
                  : []),
              ]),
            );
          }),
        ),
  );
}

async function cancel(handle: string, changed: () => void): Promise<void> {
  if (
    !(await confirmAction(
      'Cancel the redrive?',
      'Messages already moved stay moved; the rest stay in the dead-letter queue.',
      'Cancel redrive',
    ))
  )
    return;
  try {
    const moved = await cancelMove(handle);
    flash(`Cancelled after ${count(moved)} messages.`);
  } catch (e) {
    flash(errorText(e), 'error');
  }
  changed();
}

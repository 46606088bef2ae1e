import { peek, type Death, type PeekedMessage } from './api.js';
import { confirmAction } from './dialog.js';
import { badge, content, count, facts, flash, h, mainData, queueHref, queueNameOf, replace, time } from './dom.js';
import { downloadJsonLines } from './export.js';
import { deleteMessagesById } from './extensions.js';
import { stateBadge } from './messages-page.js';
import { amqpSection, binaryBodyView, rejectedOverAmqp } from './amqp-view.js';
import { loadPageQueue } from './queue-info.js';
import { messageActions } from './message-actions.js';

const MAX_PAGES = 100;

/** One message, found by PeekMessages (read-only): its body, attributes and death history. */
export async function messagePage(): Promise<void> {
  const name = mainData('queue');
  const id = mainData('messageId');
  const q = await loadPageQueue(name);
  if (!q) return;
  const hint = new URLSearchParams(location.search).get('from') ?? undefined;
  const m = (hint ? await find(q.url, id, hint) : undefined) ?? (await find(q.url, id, undefined));
  if (!m) {
    replace(
      content(),
      h(
        'p',
        { class: 'empty' },
        `No message ${id} in ${name}: it may have been received and deleted, redriven or expired.`,
      ),
      h('p', {}, h('a', { href: queueHref(name, '/messages') }, `Browse ${name}`)),
    );
    return;
  }
  const a = m.Attributes;
  const deleteButton = h(
    'button',
    { type: 'button', class: 'danger', id: 'delete-message', onclick: () => void remove() },
    'Delete…',
  );
  const remove = async () => {
    if (
      !(await confirmAction(
        'Delete this message?',
        `This deletes message ${id} from ${name}. It cannot be undone.`,
        'Delete message',
      ))
    )
      return;
    const out = await deleteMessagesById(q.url, [id]);
    if (out.Successful.length) location.assign(queueHref(name, '/messages'));
    else flash(out.Failed[0]?.Message ?? 'The message was not deleted.', 'error');
  };
  replace(
    content(),
    h(
      'div',
      { class: 'toolbar' },
      stateBadge(m.State),
      h('span', { class: 'spacer' }),
      messageActions(q, m),
      h('button', { type: 'button', onclick: () => downloadJsonLines(`${name}-${id}`, [m]) }, 'Export as JSON line'),
      deleteButton,
    ),
    h(
      'div',
      { class: 'columns' },
      h(
        'section',
        {},
        h('h2', {}, 'Body'),
        m.BodyEncoding === 'base64' ? binaryBodyView(m.Body, m.Amqp?.Properties.contentType) : bodyView(m.Body),
        m.MessageAttributes && Object.keys(m.MessageAttributes).length
          ? [
              h('h2', {}, 'Message attributes'),
              h(
                'table',
                { class: 'attrs' },
                h('thead', {}, h('tr', {}, h('th', {}, 'Name'), h('th', {}, 'Type'), h('th', {}, 'Value'))),
                h(
                  'tbody',
                  {},
                  Object.entries(m.MessageAttributes).map(([k, v]) =>
                    h(
                      'tr',
                      {},
                      h('td', { class: 'mono' }, k),
                      h('td', {}, v.DataType),
                      h('td', { class: 'mono' }, v.StringValue ?? v.BinaryValue ?? ''),
                    ),
                  ),
                ),
              ),
            ]
          : null,
        amqpSection(m),
      ),
      h(
        'section',
        {},
        h('h2', {}, 'Why it is here'),
        deathView(m),
        h('h2', {}, 'System attributes'),
        facts([
          ['Sent', time(a.SentTimestamp)],
          ['Receives', count(a.ApproximateReceiveCount)],
          ['First received', a.ApproximateFirstReceiveTimestamp ? time(a.ApproximateFirstReceiveTimestamp) : 'never'],
          ['Visible', m.State === 'VISIBLE' ? 'now' : `from ${time(m.VisibleTimestamp)}`],
          ['Dead-lettered', m.DeadLetteredTimestamp ? time(m.DeadLetteredTimestamp) : '–'],
          [
            'Died in',
            a.DeadLetterQueueSourceArn
              ? h(
                  'a',
                  { href: queueHref(queueNameOf(a.DeadLetterQueueSourceArn)) },
                  queueNameOf(a.DeadLetterQueueSourceArn),
                )
              : '–',
          ],
          ...(m.ExpiresTimestamp ? [['Expires', time(m.ExpiresTimestamp)] as [string, string]] : []),
          ...(a.MessageGroupId ? [['Group id', a.MessageGroupId] as [string, string]] : []),
          ...(a.MessageDeduplicationId ? [['Deduplication id', a.MessageDeduplicationId] as [string, string]] : []),
          ...(a.SequenceNumber ? [['Sequence number', a.SequenceNumber] as [string, string]] : []),
          ['MD5 of body', h('code', {}, m.MD5OfBody)],
        ]),
      ),
    ),
  );
}

async function find(url: string, id: string, from: string | undefined): Promise<PeekedMessage | undefined> {
  let token = from;
  for (let i = 0; i < MAX_PAGES; i++) {
    const out = await peek(url, 100, token);
    const hit = out.Messages?.find((m) => m.MessageId === id);
    if (hit) return hit;
    if (!out.NextToken) return undefined;
    token = out.NextToken;
  }
  return undefined;
}

function bodyView(body: string): HTMLElement {
  let pretty: string | undefined;
  try {
    const parsed = JSON.parse(body) as unknown;
    if (parsed !== null && typeof parsed === 'object') pretty = JSON.stringify(parsed, null, 2);
  } catch {
    // not JSON: shown as it is
  }
  return h(
    'figure',
    { class: 'body' },
    h(
      'figcaption',
      {},
      pretty ? 'JSON, formatted' : 'Text',
      h('span', { class: 'muted' }, ` · ${count(new TextEncoder().encode(body).length)} bytes`),
    ),
    h('pre', { id: 'message-body' }, pretty ?? body),
  );
}

const REASON_TEXT: Record<string, string> = {
  delivery_limit: 'received more times than maxReceiveCount allows',
  rejected: 'rejected by a consumer (RejectMessage)',
  expired: 'its time-to-live ran out',
  maxlen: 'pushed out by the queue’s length limit',
};

const reasonText = (d: Death) =>
  rejectedOverAmqp(d) ? 'rejected over AMQP (basic.reject or basic.nack)' : (REASON_TEXT[d.reason] ?? d.reason);

/** The death history as a timeline, newest first, one entry per {queue, reason}. */
function deathView(m: PeekedMessage): HTMLElement {
  const history = m.DeathHistory ?? [];
  if (history.length === 0) {
    return h(
      'p',
      { class: 'muted' },
      m.Attributes.DeadLetterQueueSourceArn
        ? 'No death history recorded.'
        : 'This message has never been dead-lettered.',
    );
  }
  const first = m.FirstDeath;
  return h(
    'div',
    { class: 'deaths' },
    h(
      'p',
      { class: 'death-summary' },
      'Last died in ',
      h('strong', {}, m.LastDeath!.queue),
      ' because it was ',
      h(
        'strong',
        {},
        reasonText(
          history.find((d) => d.queue === m.LastDeath!.queue && d.reason === m.LastDeath!.reason) ?? history[0]!,
        ),
      ),
      '.',
      first &&
        (first.queue !== m.LastDeath!.queue || first.reason !== m.LastDeath!.reason || first.time !== m.LastDeath!.time)
        ? [' First died in ', h('strong', {}, first.queue), ` (${first.reason}) at ${time(first.time)}.`]
        : null,
    ),
    h('ol', { class: 'timeline', id: 'death-history' }, history.map(deathEntry)),
  );
}

function deathEntry(d: Death): HTMLElement {
  return h(
    'li',
    { class: `death ${d.reason}` },
    h(
      'div',
      { class: 'death-head' },
      badge(d.reason, d.reason === 'rejected' ? 'danger' : 'warn'),
      ' in ',
      h('a', { href: queueHref(d.queue) }, d.queue),
      h('span', { class: 'count' }, `× ${count(d.count)}`),
    ),
    h(
      'div',
      { class: 'muted' },
      d.count > 1 ? `first ${time(d.firstTime)}, last ${time(d.lastTime)}` : time(d.lastTime),
    ),
    d.rejectReason ? h('blockquote', { class: 'reject-reason' }, d.rejectReason) : null,
    h('div', { class: 'muted' }, reasonText(d)),
    d.exchange !== undefined
      ? h(
          'div',
          { class: 'muted death-route' },
          `published to exchange ${d.exchange === '' ? '(default)' : d.exchange} with routing keys ${(d.routingKeys ?? []).join(', ')}`,
        )
      : null,
    d.originalTtlSeconds !== undefined
      ? h('div', { class: 'muted' }, `its own TTL was ${d.originalTtlSeconds} s`)
      : null,
  );
}

import type { PeekedMessage } from './api.js';
import { confirmAction } from './dialog.js';
import { count, errorText, flash, h, queueHref, queueNameOf, replace } from './dom.js';
import { changeVisibilityById, countMatches, moveMessagesById } from './extensions.js';
import { arnFor, type QueueInfo } from './queue-info.js';

/**
 * The operator's actions on one message (docs/console.md): make an in-flight message
 * visible now or change its visibility, redrive it to the queue it died in, or move it to
 * another queue. Each is confirmed first and done with the same API a client would use
 * (ChangeMessageVisibilityById, MoveMessagesById), and the server logs it.
 */
export function messageActions(q: QueueInfo, m: PeekedMessage): HTMLElement[] {
  const id = m.MessageId;
  const source = m.Attributes.DeadLetterQueueSourceArn;
  const act = async (work: () => Promise<string>, reload = true) => {
    try {
      flash(await work());
      if (reload) setTimeout(() => location.reload(), 600);
    } catch (e) {
      flash(errorText(e), 'error');
    }
  };
  const visibleNow = async () => {
    if (
      !(await confirmAction(
        'Make this message visible now?',
        `Message ${id} is in flight in ${q.name}. It becomes visible at once, so the next receive gets it; the consumer that holds it can no longer extend it, as when its visibility timeout ends.`,
        'Make visible',
      ))
    )
      return;
    await act(async () => {
      await changeVisibilityById(q.url, id, 0);
      return `Message ${id} is visible again.`;
    });
  };
  const changeVisibility = async () => {
    const input = h('input', {
      type: 'number',
      name: 'visibility-timeout',
      id: 'visibility-timeout',
      min: '0',
      max: '43200',
      value: '300',
    });
    const field = h('label', { class: 'field' }, 'Seconds from now (0 to 43,200): ', input);
    if (
      !(await confirmAction(
        'Change this message’s visibility?',
        `Message ${id} stays in flight in ${q.name} for the time you give, counted from now (at most 12 hours from its receive); 0 makes it visible now.`,
        'Change visibility',
        field,
      ))
    )
      return;
    const seconds = Number(input.value);
    await act(async () => {
      await changeVisibilityById(q.url, id, seconds);
      return `Message ${id} is hidden for ${seconds} s from now.`;
    });
  };
  const move = (destinationArn: string | undefined) =>
    act(async () => {
      const out = await moveMessagesById(q.url, [id], destinationArn);
      if (!out.Successful.length) throw new Error(out.Failed[0]?.Message ?? 'The message was not moved.');
      const moved = out.Successful[0]!;
      setTimeout(() => location.assign(queueHref(queueNameOf(moved.DestinationArn))), 600);
      return `Moved to ${queueNameOf(moved.DestinationArn)} as ${moved.MessageId}.`;
    }, false);
  const what = 'as a new message (a new id; its death history goes with it), as a redrive sends it';
  const redrive = async () => {
    const to = queueNameOf(source!);
    if (
      await confirmAction(
        `Redrive this message to ${to}?`,
        `Message ${id} leaves ${q.name} and is sent back to ${to}, the queue it died in, ${what}.`,
        `Redrive to ${to}`,
      )
    )
      await move(undefined);
  };
  const moveTo = async () => {
    const input = h('input', {
      type: 'text',
      name: 'destination',
      id: 'move-destination',
      placeholder: 'queue name',
      autocomplete: 'off',
    });
    const field = h(
      'label',
      { class: 'field' },
      `A ${q.fifo ? 'FIFO' : 'standard'} queue of this account and region: `,
      input,
    );
    if (
      !(await confirmAction(
        'Move this message to another queue?',
        `Message ${id} leaves ${q.name} and is sent to the queue you name ${what}.`,
        'Move',
        field,
      ))
    )
      return;
    const name = input.value.trim();
    if (name) await move(arnFor(q, name));
    else flash('Name the queue to move the message to.', 'error');
  };
  const inFlight = m.State === 'IN_FLIGHT';
  return [
    inFlight
      ? h('button', { type: 'button', id: 'make-visible', onclick: () => void visibleNow() }, 'Make visible now')
      : null,
    inFlight
      ? h(
          'button',
          { type: 'button', id: 'change-visibility', onclick: () => void changeVisibility() },
          'Change visibility…',
        )
      : null,
    source && !inFlight
      ? h(
          'button',
          { type: 'button', id: 'redrive-message', onclick: () => void redrive() },
          `Redrive to ${queueNameOf(source)}…`,
        )
      : null,
    !inFlight ? h('button', { type: 'button', id: 'move-message', onclick: () => void moveTo() }, 'Move to…') : null,
  ].filter((b): b is HTMLButtonElement => b !== null);
}

/** "Move selected…" on a messages list: the chosen messages to the queues they died in, or all to one queue. */
export function moveSelectedButton(q: QueueInfo, selected: () => string[]): HTMLElement {
  const moveChosen = async () => {
    const ids = selected();
    if (ids.length === 0) return flash('Select messages to move first.', 'error');
    const input = h('input', {
      type: 'text',
      name: 'destination',
      id: 'move-selected-destination',
      placeholder: 'the queue each died in',
      autocomplete: 'off',
    });
    const field = h(
      'label',
      { class: 'field' },
      `Move to (a ${q.fifo ? 'FIFO' : 'standard'} queue; empty: back to the queue each died in): `,
      input,
    );
    if (
      !(await confirmAction(
        `Move ${ids.length} messages?`,
        `The ${ids.length} selected messages leave ${q.name} and are sent as new messages (new ids; death histories go with them), as a redrive sends them. Messages in flight stay.`,
        `Move ${ids.length}`,
        field,
      ))
    )
      return;
    const name = input.value.trim();
    try {
      const out = await moveMessagesById(q.url, ids, name ? arnFor(q, name) : undefined);
      flash(
        `Moved ${out.Successful.length} of ${ids.length}.${out.Failed.length ? ` ${out.Failed[0]!.Message}` : ''}`,
        out.Failed.length ? 'error' : 'notice',
      );
      setTimeout(() => location.reload(), 600);
    } catch (e) {
      flash(errorText(e), 'error');
    }
  };
  return h('button', { type: 'button', id: 'move-selected', onclick: () => void moveChosen() }, 'Move selected…');
}

/** How many messages a search matches, counted by the server in the background: exactly, or "at least" past its budget. */
export function matchCount(q: QueueInfo, filter: object): HTMLElement {
  const el = h('p', { class: 'muted', id: 'match-count' }, 'Counting the matches…');
  void countMatches(q.url, filter).then(
    (r) =>
      replace(
        el,
        r.exact
          ? `${count(r.count)} ${r.count === 1 ? 'message matches' : 'messages match'} in ${q.name}.`
          : `At least ${count(r.count)} messages match (the first ${count(r.examined)} of the queue were searched).`,
      ),
    (e) => replace(el, errorText(e)),
  );
  return el;
}

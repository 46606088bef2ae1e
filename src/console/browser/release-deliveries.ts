import { call } from './api.js';
import { confirmAction } from './dialog.js';
import { count, errorText, flash, h } from './dom.js';

interface Released {
  Released: number;
  Self: string;
  Holders: { Holder: string; Alive: boolean }[];
}

/**
 * Stuck AMQP deliveries (docs/console.md): the unacknowledged deliveries of a server
 * process that stopped go back to their queues by themselves at the next start (and
 * within 10 s on PostgreSQL); this returns them now, after a confirmation, with
 * ReleaseAmqpDeliveries, which the server logs. A running consumer's deliveries come back
 * when its connection closes.
 */
export function releaseDeliveries(onReleased: () => void): HTMLElement {
  const release = async () => {
    if (
      !(await confirmAction(
        'Release stuck AMQP deliveries?',
        'The unacknowledged AMQP deliveries held by server processes that stopped go back to their queues now, ' +
          'visible at once with their receive counts kept (so they are redelivered). Consumers of running servers keep theirs: ' +
          'they come back when the consumer’s connection closes.',
        'Release deliveries',
      ))
    )
      return;
    try {
      const r = await call<Released>('ReleaseAmqpDeliveries', {});
      const gone = r.Holders.filter((x) => !x.Alive).length;
      flash(
        r.Released > 0
          ? `Released ${count(r.Released)} ${r.Released === 1 ? 'delivery' : 'deliveries'} held by ${count(gone)} stopped server ${gone === 1 ? 'process' : 'processes'}.`
          : 'No stopped server process held deliveries; nothing to release.',
      );
      onReleased();
    } catch (e) {
      flash(errorText(e), 'error');
    }
  };
  return h(
    'section',
    { id: 'stuck-deliveries' },
    h('h2', {}, 'Stuck AMQP deliveries'),
    h(
      'p',
      { class: 'muted' },
      'Messages delivered over AMQP by a server process that stopped return here at the next start; release them now instead.',
    ),
    h(
      'p',
      {},
      h('button', { type: 'button', id: 'release-deliveries', onclick: () => void release() }, 'Release deliveries…'),
    ),
  );
}

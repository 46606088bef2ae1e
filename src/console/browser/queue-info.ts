import { deadLetterSources, queueAttributes, queueUrl, type Attributes } from './api.js';
import { badge, content, errorText, h, queueNameOf, replace } from './dom.js';
import { deadLetterTargetOf } from './queue-summaries.js';

/** What every page about one queue needs to know about it. */
export interface QueueInfo {
  name: string;
  url: string;
  arn: string;
  fifo: boolean;
  attributes: Attributes;
  /** URLs of the queues that dead-letter into this one. */
  sources: string[];
  target?: { arn: string; maxReceiveCount: number };
}

export async function loadQueue(name: string): Promise<QueueInfo> {
  const url = await queueUrl(name);
  const [attributes, sources] = await Promise.all([queueAttributes(url), deadLetterSources(url)]);
  return {
    name,
    url,
    attributes,
    sources,
    arn: attributes.QueueArn ?? '',
    fifo: attributes.FifoQueue === 'true',
    target: deadLetterTargetOf(attributes.RedrivePolicy),
  };
}

/** Loads the page's queue and shows its badges; on failure, says why in the page and gives undefined. */
export async function loadPageQueue(name: string): Promise<QueueInfo | undefined> {
  try {
    const q = await loadQueue(name);
    showBadges(q);
    return q;
  } catch (e) {
    // Nothing to browse or redrive: the queue's tabs would lead to the same error.
    document.querySelector('nav.tabs')?.remove();
    replace(
      content(),
      h('p', { class: 'error' }, errorText(e)),
      h('p', {}, h('a', { href: '/console/queues' }, 'All queues')),
    );
    return undefined;
  }
}

export const depthOf = (a: Attributes): number =>
  Number(a.ApproximateNumberOfMessages ?? 0) +
  Number(a.ApproximateNumberOfMessagesNotVisible ?? 0) +
  Number(a.ApproximateNumberOfMessagesDelayed ?? 0);

/** The type and dead-letter role badges next to the page's title. */
export function showBadges(q: QueueInfo): void {
  const el = document.getElementById('queue-badges');
  if (!el) return;
  replace(
    el,
    badge(q.fifo ? 'FIFO' : 'Standard'),
    q.sources.length
      ? badge(
          'DLQ',
          depthOf(q.attributes) > 0 ? 'danger' : 'neutral',
          `Dead-letter queue of ${q.sources.map(queueNameOf).join(', ')}`,
        )
      : null,
    q.target ? badge(`source → ${queueNameOf(q.target.arn)}`, 'info') : null,
  );
  if (!q.sources.length) document.getElementById('redrive-tab')?.classList.add('hidden');
}

/** The ARN of the queue `name` of the same account and region as `q` (they share the ARN's prefix). */
export function arnFor(q: Pick<QueueInfo, 'arn'>, name: string): string {
  return `${q.arn.slice(0, q.arn.lastIndexOf(':') + 1)}${name}`;
}

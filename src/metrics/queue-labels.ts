import type { QueueRecord } from '../engine/kernel/types.js';

/** The labels of a queue's series, as CloudWatch's dimensions plus the account and region. */
export interface QueueLabels {
  queue_name: string;
  account_id: string;
  region: string;
}

/**
 * Each queue's labels by id, made once and shared by all its series. A dead-letter move
 * names its target by id only; an id not seen yet is looked up in the store once.
 */
export class QueueLabelCache {
  private readonly byQueueId = new Map<number, QueueLabels>();
  private readonly texts = new Map<number, string>();

  constructor(private readonly lookup: (id: number) => Promise<QueueRecord | undefined>) {}

  remember(queue: Pick<QueueRecord, 'id' | 'accountId' | 'region' | 'name'>): QueueLabels {
    let labels = this.byQueueId.get(queue.id);
    if (!labels) this.byQueueId.set(queue.id, (labels = this.labelsOf(queue)));
    return labels;
  }

  /** The labels as they are written in the text format: `queue_name="…",account_id="…",region="…"`. */
  text(queue: Pick<QueueRecord, 'id' | 'accountId' | 'region' | 'name'>): string {
    let text = this.texts.get(queue.id);
    if (text === undefined) {
      const l = this.remember(queue);
      text = `queue_name="${escapeLabel(l.queue_name)}",account_id="${escapeLabel(l.account_id)}",region="${escapeLabel(l.region)}"`;
      this.texts.set(queue.id, text);
    }
    return text;
  }

  /** The queue's own region: one server serves every region (docs/regions.md). */
  labelsOf(queue: Pick<QueueRecord, 'accountId' | 'region' | 'name'>): QueueLabels {
    return { queue_name: queue.name, account_id: queue.accountId, region: queue.region };
  }

  async byId(id: number): Promise<QueueLabels | undefined> {
    const known = this.byQueueId.get(id);
    if (known) return known;
    const queue = await this.lookup(id).catch(() => undefined);
    return queue && this.remember(queue);
  }

  /** Forgets queues that no longer exist. */
  prune(exists: (queueId: number) => boolean): void {
    for (const id of this.byQueueId.keys()) {
      if (exists(id)) continue;
      this.byQueueId.delete(id);
      this.texts.delete(id);
    }
  }
}

/** A label value in the text format: backslash, double quote and line feed escaped. */
const escapeLabel = (v: string) => v.replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`));

import type { Registry } from 'prom-client';
import { parseQueueArn } from '../engine/addressing.js';
import type { EngineContext } from '../engine/context.js';
import type { QueueRecord } from '../engine/types.js';
import type { QueueLabelCache, QueueLabels } from './queue-labels.js';

/** Queues per store call: 10,000 queues are read in ten calls, with requests served in between. */
export const DEPTHS_CHUNK = 1000;

interface Sample {
  labels: QueueLabels;
  value: number;
}

/** A gauge whose samples are computed by `QueueGauges.refresh` for each scrape. */
function collectedGauge(registry: Registry, name: string, help: string, samples: () => Sample[]): void {
  registry.registerMetric({
    name, help, type: 'gauge',
    get: () => ({ name, help, type: 'gauge', values: samples(), aggregator: 'omit' }),
  } as never);
}

/**
 * The queue gauges, read from the store at scrape time, so every node of a shared
 * PostgreSQL store reports the same figures. `messages.depths` reads many queues in one
 * call and never counts a queue's visible backlog, so a scrape does not grow with it.
 */
export class QueueGauges {
  private visible: Sample[] = [];
  private inflight: Sample[] = [];
  private delayed: Sample[] = [];
  private oldest: Sample[] = [];
  private groups: Sample[] = [];
  private sources: Sample[] = [];

  constructor(
    registry: Registry,
    private readonly engine: Pick<EngineContext, 'store' | 'clock' | 'settingsOf' | 'region'>,
    private readonly names: QueueLabelCache,
  ) {
    const gauge = (name: string, help: string, read: () => Sample[]) => collectedGauge(registry, name, help, read);
    gauge('redrive_approximate_number_of_messages_visible', 'Messages available for retrieval (CloudWatch ApproximateNumberOfMessagesVisible).', () => this.visible);
    gauge('redrive_approximate_number_of_messages_not_visible', 'Messages in flight: received, not yet deleted nor visible again (CloudWatch ApproximateNumberOfMessagesNotVisible).', () => this.inflight);
    gauge('redrive_approximate_number_of_messages_delayed', 'Messages delayed and not yet available (CloudWatch ApproximateNumberOfMessagesDelayed).', () => this.delayed);
    gauge('redrive_approximate_age_of_oldest_message', 'Seconds since the oldest message was sent; on a standard dead-letter queue since its original send, on a FIFO one since the move (CloudWatch ApproximateAgeOfOldestMessage).', () => this.oldest);
    gauge('redrive_approximate_number_of_groups_with_inflight_messages', 'FIFO queues: message groups with a message in flight (CloudWatch ApproximateNumberOfGroupsWithInflightMessages).', () => this.groups);
    gauge('redrive_dead_letter_queue_sources', 'Queues whose dead-letter queue is queue_name (by RedrivePolicy or server policy); present only for dead-letter queues.', () => this.sources);
  }

  /** Reads every queue's depth; returns the ids of the queues that exist. */
  async refresh(): Promise<Set<number>> {
    const queues = await this.engine.store.queues.all();
    const now = this.engine.clock.now();
    const next = { visible: [] as Sample[], inflight: [] as Sample[], delayed: [] as Sample[], oldest: [] as Sample[], groups: [] as Sample[] };
    const byId = new Map<number, QueueRecord>(queues.map((q) => [q.id, q]));
    for (let i = 0; i < queues.length; i += DEPTHS_CHUNK) {
      if (i > 0) await new Promise((resolve) => setImmediate(resolve));
      const chunk = queues.slice(i, i + DEPTHS_CHUNK);
      const depths = await this.engine.store.messages.depths(chunk.map((q) => q.id), now);
      for (const [id, d] of depths) {
        const queue = byId.get(id)!;
        const labels = this.names.remember(queue);
        next.visible.push({ labels, value: d.visible });
        next.inflight.push({ labels, value: d.inflight });
        next.delayed.push({ labels, value: d.delayed });
        next.oldest.push({ labels, value: d.oldestSentAt === undefined ? 0 : Math.max(0, now - d.oldestSentAt) / 1000 });
        if (queue.fifo) next.groups.push({ labels, value: d.groupsInflight });
      }
    }
    Object.assign(this, next);
    this.sources = this.deadLetterSources(queues);
    return new Set(byId.keys());
  }

  /** How many queues dead-letter into each queue, for the queues that are a target. */
  private deadLetterSources(queues: QueueRecord[]): Sample[] {
    const counts = new Map<string, number>();
    for (const q of queues) {
      const arn = this.engine.settingsOf(q).targetArn;
      const target = arn ? parseQueueArn(arn) : undefined;
      if (!target || target.region !== this.engine.region) continue;
      const key = `${target.accountId}/${target.name}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    return queues.flatMap((q) => {
      const n = counts.get(`${q.accountId}/${q.name}`);
      return n ? [{ labels: this.names.remember(q), value: n }] : [];
    });
  }
}

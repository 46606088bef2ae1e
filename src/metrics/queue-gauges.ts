import { parseQueueArn } from '../engine/kernel/addressing.js';
import type { EngineContext } from '../engine/context/engine-context.js';
import type { QueueRecord } from '../engine/kernel/types.js';
import type { QueueLabelCache } from './queue-labels.js';

/** Queues per store call: 10,000 queues are read in ten calls, with requests served in between. */
const DEPTHS_CHUNK = 1000;

const GAUGES = [
  [
    'redrive_approximate_number_of_messages_visible',
    'Messages available for retrieval (CloudWatch ApproximateNumberOfMessagesVisible).',
  ],
  [
    'redrive_approximate_number_of_messages_not_visible',
    'Messages in flight: received, not yet deleted nor visible again (CloudWatch ApproximateNumberOfMessagesNotVisible).',
  ],
  [
    'redrive_approximate_number_of_messages_delayed',
    'Messages delayed and not yet available (CloudWatch ApproximateNumberOfMessagesDelayed).',
  ],
  [
    'redrive_approximate_age_of_oldest_message',
    'Seconds since the oldest message was sent; on a standard dead-letter queue since its original send, on a FIFO one since the move (CloudWatch ApproximateAgeOfOldestMessage).',
  ],
  [
    'redrive_approximate_number_of_groups_with_inflight_messages',
    'FIFO queues: message groups with a message in flight (CloudWatch ApproximateNumberOfGroupsWithInflightMessages).',
  ],
  [
    'redrive_dead_letter_queue_sources',
    'Queues whose dead-letter queue is queue_name (by RedrivePolicy or server policy); present only for dead-letter queues.',
  ],
] as const;

/**
 * The queue gauges, read from the store at scrape time, so every node of a shared
 * PostgreSQL store reports the same figures. `messages.depths` reads many queues in one
 * call and never counts a queue's visible backlog, so a scrape does not grow with it.
 *
 * They are written as text here rather than through prom-client: with 10,000 queues they
 * are 40,000 lines or more, and prom-client's formatting (label objects merged, escaped
 * and joined for every line) took several hundred milliseconds of the scrape; each
 * queue's label text is made once (QueueLabelCache.text).
 */
export class QueueGauges {
  constructor(
    private readonly engine: Pick<EngineContext, 'store' | 'clock' | 'settingsOf'>,
    private readonly names: QueueLabelCache,
  ) {}

  /** Reads every queue's depth; returns the text of the gauges and the ids of the queues that exist. */
  async collect(): Promise<{ text: string; exists: Set<number> }> {
    const queues = await this.engine.store.queues.all();
    const now = this.engine.clock.now();
    const lines: string[][] = GAUGES.map(([name, help]) => [`# HELP ${name} ${help}`, `# TYPE ${name} gauge`]);
    const [visible, inflight, delayed, oldest, groups, sources] = lines as [
      string[],
      string[],
      string[],
      string[],
      string[],
      string[],
    ];
    const byId = new Map<number, QueueRecord>(queues.map((q) => [q.id, q]));
    for (let i = 0; i < queues.length; i += DEPTHS_CHUNK) {
      if (i > 0) await new Promise((resolve) => setImmediate(resolve));
      const chunk = queues.slice(i, i + DEPTHS_CHUNK);
      const depths = await this.engine.store.messages.depths(
        chunk.map((q) => q.id),
        now,
      );
      for (const [id, d] of depths) {
        const queue = byId.get(id)!;
        const labels = this.names.text(queue);
        visible.push(`${GAUGES[0][0]}{${labels}} ${d.visible}`);
        inflight.push(`${GAUGES[1][0]}{${labels}} ${d.inflight}`);
        delayed.push(`${GAUGES[2][0]}{${labels}} ${d.delayed}`);
        oldest.push(
          `${GAUGES[3][0]}{${labels}} ${d.oldestSentAt === undefined ? 0 : Math.max(0, now - d.oldestSentAt) / 1000}`,
        );
        if (queue.fifo) groups.push(`${GAUGES[4][0]}{${labels}} ${d.groupsInflight}`);
      }
    }
    for (const [queue, n] of this.deadLetterSources(queues))
      sources.push(`${GAUGES[5][0]}{${this.names.text(queue)}} ${n}`);
    return { text: `${lines.map((l) => l.join('\n')).join('\n')}\n`, exists: new Set(byId.keys()) };
  }

  /** How many queues dead-letter into each queue, for the queues that are a target. */
  private deadLetterSources(queues: readonly QueueRecord[]): [QueueRecord, number][] {
    const counts = new Map<string, number>();
    for (const q of queues) {
      const arn = this.engine.settingsOf(q).targetArn;
      const target = arn ? parseQueueArn(arn) : undefined;
      // A dead-letter queue is in its sources' region.
      if (!target || target.region !== q.region) continue;
      const key = `${target.accountId}/${target.region}/${target.name}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    return queues.flatMap((q) => {
      const n = counts.get(`${q.accountId}/${q.region}/${q.name}`);
      return n ? [[q, n] as [QueueRecord, number]] : [];
    });
  }
}

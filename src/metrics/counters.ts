import { Counter, type Registry } from 'prom-client';
import { parseQueueArn } from '../engine/kernel/addressing.js';
import type { EngineObserver } from '../engine/context/observer.js';
import type { MoveTaskRecord } from '../engine/store/move-tasks.js';
import type { DeathReason, QueueRecord } from '../engine/kernel/types.js';
import { HotCounter, HotHistogram, type CounterSeries, type HistogramSeries } from './hot-metrics.js';
import { MoveTaskGauges } from './move-task-gauges.js';
import type { QueueLabelCache, QueueLabels } from './queue-labels.js';

type Child = Counter.Internal;

/** One queue's series, made once at its first event so the hot path allocates nothing. */
interface QueueSeries {
  labels: QueueLabels & { node: string };
  sent: CounterSeries;
  received: CounterSeries;
  deleted: CounterSeries;
  emptyReceives: CounterSeries;
  deduplicated: CounterSeries;
  sizes?: HistogramSeries;
}

const QUEUE = ['queue_name', 'account_id', 'region', 'node'] as const;
/** Message sizes from 64 B to SQS's 1 MiB limit. */
const SIZE_BUCKETS = [64, 256, 1024, 4096, 16384, 65536, 262144, 1048576];
/** Request latency from 1 ms to a full 20 s long poll. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20.5];

/**
 * The engine's observer as Prometheus counters of this node (label `node`): every node
 * counts what it served, so `sum` over the nodes is the whole. Counters are cumulative
 * since the process started, as Prometheus expects (`rate` and `increase` handle restarts).
 */
export class CounterObserver implements EngineObserver {
  private readonly queues = new Map<number, QueueSeries>();
  private readonly deadLetterSeries = new Map<string, { child: Child; labels: Record<string, string> }>();
  private readonly requestSeries = new Map<
    string,
    Map<string, Map<string, { count: CounterSeries; seconds: HistogramSeries }>>
  >();
  private readonly m;
  private readonly moveTasks: MoveTaskGauges;

  constructor(
    registry: Registry,
    private readonly node: string,
    private readonly names: QueueLabelCache,
  ) {
    const counter = (name: string, help: string, labelNames: readonly string[] = QUEUE) =>
      new Counter({ name, help, labelNames, registers: [registry] });
    // The series moved by every message or request count in plain numbers (hot-metrics.ts).
    const hot = (name: string, help: string, labelNames: readonly string[] = QUEUE) =>
      new HotCounter(registry, name, help, labelNames);
    this.m = {
      sent: hot(
        'redrive_number_of_messages_sent_total',
        "Messages stored by a send: a client's or a redrive's (CloudWatch NumberOfMessagesSent); dead-letter moves are not sends.",
      ),
      received: hot(
        'redrive_number_of_messages_received_total',
        'Messages returned by ReceiveMessage or an AMQP delivery, and messages a redrive took (CloudWatch NumberOfMessagesReceived).',
      ),
      deleted: hot(
        'redrive_number_of_messages_deleted_total',
        'Messages deleted by a client, an operator or a redrive; not by a purge or retention (CloudWatch NumberOfMessagesDeleted).',
      ),
      emptyReceives: hot(
        'redrive_number_of_empty_receives_total',
        'ReceiveMessage calls that returned no message (CloudWatch NumberOfEmptyReceives).',
      ),
      deduplicated: hot(
        'redrive_number_of_deduplicated_sent_messages_total',
        'FIFO sends answered from the deduplication cache (CloudWatch NumberOfDeduplicatedSentMessages).',
      ),
      sizes: new HotHistogram(
        registry,
        'redrive_sent_message_size_bytes',
        'Size of messages sent by SQS clients, body and attributes (CloudWatch SentMessageSize).',
        SIZE_BUCKETS,
      ),
      deadLettered: counter(
        'redrive_messages_dead_lettered_total',
        'Messages moved from queue_name into dead_letter_queue, by reason.',
        [...QUEUE, 'dead_letter_queue', 'reason'],
      ),
      dropped: counter(
        'redrive_messages_dropped_total',
        'Messages removed for a reason with no dead-letter queue to go to (TTL or length limit).',
        [...QUEUE, 'reason'],
      ),
      cycles: counter(
        'redrive_dead_letter_cycles_broken_total',
        'Messages that would have closed a dead-letter cycle, parked in redrive-cycles instead.',
        [...QUEUE, 'reason'],
      ),
      copiesDropped: counter(
        'redrive_dead_letter_copies_dropped_total',
        'Dead-letter copies not made through an AMQP dead-letter exchange: the copies one message may create were spent.',
        [...QUEUE, 'reason'],
      ),
      requests: hot(
        'redrive_requests_total',
        'SQS API requests served, by action, protocol and error code ("" for success).',
        ['action', 'protocol', 'error_code', 'node'],
      ),
      latency: new HotHistogram(
        registry,
        'redrive_request_duration_seconds',
        'Time to serve an SQS API request, long-poll waits included.',
        LATENCY_BUCKETS,
      ),
    };
    this.moveTasks = new MoveTaskGauges(registry, node);
  }

  sent(queue: QueueRecord, count: number, sizes?: readonly number[]): void {
    const s = this.series(queue);
    s.sent.inc(count);
    if (!sizes) return;
    s.sizes ??= this.m.sizes.labels(s.labels);
    for (const size of sizes) s.sizes.observe(size);
  }

  deduplicated(queue: QueueRecord, count: number): void {
    this.series(queue).deduplicated.inc(count);
  }

  received(queue: QueueRecord, count: number): void {
    const s = this.series(queue);
    if (count > 0) s.received.inc(count);
    else s.emptyReceives.inc();
  }

  deleted(queue: QueueRecord, count: number): void {
    this.series(queue).deleted.inc(count);
  }

  deadLettered(from: QueueRecord, to: number, reason: DeathReason): void {
    const key = `${from.id}:${to}:${reason}`;
    const known = this.deadLetterSeries.get(key);
    if (known) {
      known.child.inc();
      return;
    }
    // The first move into this queue: its name may need a store read, so count once it is known.
    void this.names.byId(to).then((dlq) => {
      let s = this.deadLetterSeries.get(key);
      if (!s) {
        const labels = { ...this.series(from).labels, dead_letter_queue: dlq?.queue_name ?? String(to), reason };
        s = { child: this.m.deadLettered.labels(labels), labels };
        this.deadLetterSeries.set(key, s);
      }
      s.child.inc();
    });
  }

  dropped(from: QueueRecord, reason: DeathReason): void {
    this.m.dropped.inc({ ...this.series(from).labels, reason });
  }

  cycleBroken(from: QueueRecord, reason: DeathReason): void {
    this.m.cycles.inc({ ...this.series(from).labels, reason });
  }

  copiesDropped(from: QueueRecord, reason: DeathReason, count: number): void {
    this.m.copiesDropped.inc({ ...this.series(from).labels, reason }, count);
  }

  moveTask(task: MoveTaskRecord, movedNow: number): void {
    const source = parseQueueArn(task.sourceArn);
    if (source) this.moveTasks.update(task, movedNow, this.names.labelsOf(source));
  }

  request(action: string, protocol: string, errorCode: string, seconds: number): void {
    let byProtocol = this.requestSeries.get(action);
    if (!byProtocol) this.requestSeries.set(action, (byProtocol = new Map()));
    let byCode = byProtocol.get(protocol);
    if (!byCode) byProtocol.set(protocol, (byCode = new Map()));
    let s = byCode.get(errorCode);
    if (!s) {
      s = {
        count: this.m.requests.labels({ action, protocol, error_code: errorCode, node: this.node }),
        seconds: this.m.latency.labels({ action, protocol, node: this.node }),
      };
      byCode.set(errorCode, s);
    }
    s.count.inc();
    s.seconds.observe(seconds);
  }

  /** Forgets the series of queues that no longer exist (`exists` is false for their id). */
  prune(exists: (queueId: number) => boolean): void {
    for (const [id, s] of this.queues) {
      if (exists(id)) continue;
      this.queues.delete(id);
      for (const m of [
        this.m.sent,
        this.m.received,
        this.m.deleted,
        this.m.emptyReceives,
        this.m.deduplicated,
        this.m.sizes,
      ])
        m.remove(s.labels);
    }
    for (const [key, s] of this.deadLetterSeries) {
      const [from, to] = key.split(':').map(Number);
      if (exists(from!) && exists(to!)) continue;
      this.deadLetterSeries.delete(key);
      this.m.deadLettered.remove(s.labels);
    }
  }

  /** A queue's counters, all made at once, at 0, so `increase` sees their first event. */
  private series(queue: QueueRecord): QueueSeries {
    let s = this.queues.get(queue.id);
    if (s) return s;
    const labels = { ...this.names.remember(queue), node: this.node };
    const zeroed = (c: HotCounter) => c.labels(labels, true);
    s = {
      labels,
      sent: zeroed(this.m.sent),
      received: zeroed(this.m.received),
      deleted: zeroed(this.m.deleted),
      emptyReceives: zeroed(this.m.emptyReceives),
      deduplicated: zeroed(this.m.deduplicated),
    };
    this.queues.set(queue.id, s);
    return s;
  }
}

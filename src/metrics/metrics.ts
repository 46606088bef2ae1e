import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import type { Engine } from '../engine/engine.js';
import type { Store } from '../engine/store/store.js';
import { CounterObserver } from './counters.js';
import { QueueGauges } from './queue-gauges.js';
import { QueueLabelCache } from './queue-labels.js';
import { registerStoreStats } from './store-stats.js';

export interface MetricsOptions {
  store: Store;
  /** This node's id, the `node` label of every per-node series (docs/monitoring.md). */
  node: string;
}

/**
 * Everything `/metrics` shows, in a registry of its own (not prom-client's global one, so
 * several servers in one process, as in tests, keep their figures apart): the queue
 * gauges read from the store, this node's counters, the store's figures, the process.
 */
/** What the AMQP listener counts for /metrics. */
export interface AmqpCounts {
  amqp091: number;
  amqp10: number;
  amqp10Links: number;
}

export class ServerMetrics {
  readonly registry = new Registry();
  /** The engine's observer: give it to the Engine, then `attach` the engine. */
  readonly observer: CounterObserver;
  private readonly names: QueueLabelCache;
  private gauges?: QueueGauges;
  private collecting?: Promise<string>;

  constructor(opts: MetricsOptions) {
    this.names = new QueueLabelCache((id) => opts.store.queues.byId(id));
    this.observer = new CounterObserver(this.registry, opts.node, this.names);
    collectDefaultMetrics({ register: this.registry, labels: { node: opts.node } });
    // Gauges named like counters, which `promtool check metrics` rejects; the same figures
    // remain as nodejs_active_handles, _requests and _resources (by type).
    for (const name of [
      'nodejs_active_handles_total',
      'nodejs_active_requests_total',
      'nodejs_active_resources_total',
    ]) {
      this.registry.removeSingleMetric(name);
    }
    if (opts.store.stats) registerStoreStats(this.registry, () => opts.store.stats!(), opts.node);
  }

  /** Starts reading the queue gauges and the long polls from the engine. */
  attach(engine: Engine, node: string): void {
    this.gauges = new QueueGauges(engine, this.names);
    new Gauge({
      name: 'redrive_long_polls_waiting',
      help: 'ReceiveMessage calls waiting on this node for messages to arrive.',
      labelNames: ['node'],
      registers: [this.registry],
      collect() {
        this.set({ node }, engine.longPolls.size);
      },
    });
  }

  /** The AMQP listener's gauges: open connections by protocol, and AMQP 1.0 links. */
  attachAmqp(counts: () => AmqpCounts, node: string): void {
    new Gauge({
      name: 'redrive_amqp_connections',
      help: 'Signed-in AMQP connections on this node, by protocol (0-9-1 or 1.0).',
      labelNames: ['node', 'protocol'],
      registers: [this.registry],
      collect() {
        const c = counts();
        this.set({ node, protocol: '0-9-1' }, c.amqp091);
        this.set({ node, protocol: '1.0' }, c.amqp10);
      },
    });
    new Gauge({
      name: 'redrive_amqp_links',
      help: 'Attached AMQP 1.0 links on this node.',
      labelNames: ['node'],
      registers: [this.registry],
      collect() {
        this.set({ node }, counts().amqp10Links);
      },
    });
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The text of a scrape. Scrapes that arrive together share one reading of the store. */
  scrape(): Promise<string> {
    this.collecting ??= this.collect().finally(() => (this.collecting = undefined));
    return this.collecting;
  }

  private async collect(): Promise<string> {
    if (!this.gauges) return this.registry.metrics();
    const { text, exists } = await this.gauges.collect();
    this.observer.prune((id) => exists.has(id));
    this.names.prune((id) => exists.has(id));
    return `${await this.registry.metrics()}\n${text}`;
  }
}

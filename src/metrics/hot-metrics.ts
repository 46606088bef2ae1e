import { Counter, type Registry } from 'prom-client';

/**
 * Counters and histograms for the series every request moves (requests, their latency,
 * messages sent and their sizes). prom-client's children hash their labels into a string
 * and validate them on every `inc` and `observe` (about 0.4 and 0.6 µs here, with garbage
 * each time), and a SendMessage made four such calls. These series keep plain numbers and
 * hand them over when the registry is read, so a scrape shows what prom-client's own
 * children would have shown (test/metrics/hot-metrics.test.ts compares the texts).
 */

/** A series' labels: names to values (an interface such as QueueLabels as well as a record). */
type Labels = object;

/** One counter series: `inc` adds to a number; the scrape passes the sum to prom-client. */
export class CounterSeries {
  pending = 0;

  constructor(readonly child: Counter.Internal) {}

  inc(n = 1): void {
    this.pending += n;
  }
}

/** A prom-client counter whose series are counted in CounterSeries and flushed at each read. */
export class HotCounter {
  readonly metric: Counter;
  private readonly series = new Map<string, CounterSeries>();

  constructor(registry: Registry, name: string, help: string, labelNames: readonly string[]) {
    const series = this.series;
    this.metric = new Counter({
      name,
      help,
      labelNames,
      registers: [registry],
      collect() {
        for (const s of series.values()) {
          if (s.pending === 0) continue;
          s.child.inc(s.pending);
          s.pending = 0;
        }
      },
    });
  }

  /** The series of these labels (made once, shared); `zero`: listed at 0 from now on, as `inc(labels, 0)`. */
  labels(labels: Labels, zero = false): CounterSeries {
    if (zero) this.metric.inc(labels, 0);
    const key = keyOf(labels);
    let s = this.series.get(key);
    if (!s) this.series.set(key, (s = new CounterSeries(this.metric.labels(labels))));
    return s;
  }

  remove(labels: Labels): void {
    this.series.delete(keyOf(labels));
    this.metric.remove(labels);
  }
}

/** One histogram series: bucket counts, sum and count, as prom-client keeps them. */
export class HistogramSeries {
  /** Observations per bucket, not cumulative: `counts[i]` for values in (bounds[i-1], bounds[i]]. */
  readonly counts: number[];
  sum = 0;
  count = 0;

  constructor(
    private readonly bounds: readonly number[],
    readonly labels: Labels,
  ) {
    this.counts = bounds.map(() => 0);
  }

  observe(value: number): void {
    // prom-client throws on these; an observer must not throw, and none of ours is one.
    if (!Number.isFinite(value)) return;
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]!) {
        this.counts[i]!++;
        break;
      }
    }
    this.sum += value;
    this.count++;
  }
}

type Value = {
  labels: Record<string, string | number>;
  sharedLabels?: Labels;
  value: number;
  metricName: string;
};

/**
 * A histogram registered as a metric of its own, read in prom-client's form: cumulative
 * `_bucket`s with `le` first, then `_sum` and `_count`, series in order of creation.
 */
export class HotHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, HistogramSeries>();

  constructor(
    registry: Registry,
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
  ) {
    registry.registerMetric(this as never);
  }

  /** The series of these labels, made at its first use (so it is listed from its first observation). */
  labels(labels: Labels): HistogramSeries {
    const key = keyOf(labels);
    let s = this.series.get(key);
    if (!s) this.series.set(key, (s = new HistogramSeries(this.bounds, labels)));
    return s;
  }

  remove(labels: Labels): void {
    this.series.delete(keyOf(labels));
  }

  reset(): void {
    this.series.clear();
  }

  /** What the registry formats (prom-client's `getForPromString` shape). */
  getForPromString() {
    const values: Value[] = [];
    const bucket = `${this.name}_bucket`;
    for (const s of this.series.values()) {
      if (s.count === 0) continue;
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += s.counts[i]!;
        values.push({ labels: { le }, sharedLabels: s.labels, value: cumulative, metricName: bucket });
      });
      values.push({ labels: { le: '+Inf' }, sharedLabels: s.labels, value: s.count, metricName: bucket });
      values.push({ labels: {}, sharedLabels: s.labels, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: {}, sharedLabels: s.labels, value: s.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** The same values with each series' labels folded in (prom-client's `get`, for JSON). */
  get() {
    const data = this.getForPromString();
    return {
      ...data,
      values: data.values.map(({ labels, sharedLabels, ...rest }) => ({
        ...rest,
        labels: { ...labels, ...sharedLabels },
      })),
    };
  }
}

/** The labels as one key, whatever their order (as prom-client's own hash); made once per series. */
function keyOf(labels: Labels): string {
  return JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1)));
}

import type { Registry } from 'prom-client';
import type { HistogramData, StoreStats } from '../engine/store/stats.js';

type Value = { labels: Record<string, string | number>; value: number; metricName?: string };

/** A store's cumulative histogram in Prometheus's form: cumulative `_bucket`s, `_sum`, `_count`. */
function histogramValues(name: string, h: HistogramData, labels: Record<string, string>): Value[] {
  const out: Value[] = [];
  let cumulative = 0;
  h.bounds.forEach((le, i) => {
    cumulative += h.counts[i]!;
    out.push({ metricName: `${name}_bucket`, labels: { ...labels, le }, value: cumulative });
  });
  out.push({ metricName: `${name}_bucket`, labels: { ...labels, le: '+Inf' }, value: h.count });
  out.push({ metricName: `${name}_sum`, labels, value: h.sum });
  out.push({ metricName: `${name}_count`, labels, value: h.count });
  return out;
}

/**
 * The store's own figures (`Store.stats`), read at scrape time: the SQLite group commit's
 * batch sizes and commit latency, the PostgreSQL pool. Only what the store has is registered.
 */
export function registerStoreStats(registry: Registry, stats: () => StoreStats, node: string): void {
  const labels = { node };
  const metric = (name: string, help: string, type: 'gauge' | 'histogram', values: () => Value[]) =>
    registry.registerMetric({
      name,
      help,
      type,
      get: () => ({ name, help, type, values: values(), aggregator: 'omit' }),
    } as never);
  const first = stats();
  if (first.groupCommit) {
    metric(
      'redrive_group_commit_batch_size',
      'Writes joined in one SQLite group-commit transaction.',
      'histogram',
      () => histogramValues('redrive_group_commit_batch_size', stats().groupCommit!.batchSize, labels),
    );
    metric(
      'redrive_group_commit_duration_seconds',
      'Time to run and commit one SQLite group-commit transaction.',
      'histogram',
      () => histogramValues('redrive_group_commit_duration_seconds', stats().groupCommit!.commitSeconds, labels),
    );
  }
  if (first.pool) {
    const pool = () => stats().pool!;
    metric(
      'redrive_postgres_pool_connections',
      'PostgreSQL connections this node holds open, busy or idle.',
      'gauge',
      () => [{ labels, value: pool().total }],
    );
    metric('redrive_postgres_pool_idle_connections', 'PostgreSQL connections open and idle.', 'gauge', () => [
      { labels, value: pool().idle },
    ]);
    metric(
      'redrive_postgres_pool_waiting_requests',
      'Store operations waiting for a free PostgreSQL connection.',
      'gauge',
      () => [{ labels, value: pool().waiting }],
    );
    metric('redrive_postgres_pool_max_connections', 'The pool size (pool_size in the storage URL).', 'gauge', () => [
      { labels, value: pool().max },
    ]);
  }
}

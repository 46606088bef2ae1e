/**
 * The request path's counters and histograms (src/metrics/hot-metrics.ts) count in plain
 * numbers and hand them over at each read: the scrape must be the text prom-client's own
 * children give for the same events, read after read, and forget removed series.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Counter, Histogram, Registry } from 'prom-client';
import { HotCounter, HotHistogram } from '../../src/metrics/hot-metrics.js';

const BUCKETS = [0.001, 0.01, 0.1, 1];

function pair() {
  const plain = new Registry();
  const hot = new Registry();
  return {
    plain,
    hot,
    counters: [
      new Counter({ name: 'c_total', help: 'a counter', labelNames: ['a', 'node'], registers: [plain] }),
      new HotCounter(hot, 'c_total', 'a counter', ['a', 'node']),
    ] as const,
    histograms: [
      new Histogram({
        name: 'h',
        help: 'a histogram',
        labelNames: ['a', 'node'],
        buckets: BUCKETS,
        registers: [plain],
      }),
      new HotHistogram(hot, 'h', 'a histogram', BUCKETS),
    ] as const,
  };
}

test('the same text as prom-client, read after read, with zeroed and removed series', async () => {
  const { plain, hot, counters, histograms } = pair();
  const [pc, hc] = counters;
  const [ph, hh] = histograms;
  const x = { a: 'x"\\\ny', node: 'n1' };
  const y = { node: 'n1', a: 'y' }; // another order of the same names
  // A zeroed series is listed before its first event.
  pc.inc(x, 0);
  const cx = hc.labels(x, true);
  assert.equal(await hot.metrics(), await plain.metrics());

  const values = [0, 0.0005, 0.001, 0.002, 0.5, 1, 3, 1e-9, 0.1];
  const pcx = pc.labels(x);
  const pcy = pc.labels(y);
  const phx = ph.labels(x);
  const phy = ph.labels(y);
  const cy = hc.labels(y);
  const hx = hh.labels(x);
  const hy = hh.labels(y);
  for (const [i, v] of values.entries()) {
    pcx.inc(i);
    cx.inc(i);
    phx.observe(v);
    hx.observe(v);
    if (i % 3 === 0) {
      pcy.inc();
      cy.inc();
      phy.observe(v * 7);
      hy.observe(v * 7);
    }
  }
  const text = await hot.metrics();
  assert.equal(text, await plain.metrics());
  assert.match(text, /^c_total\{a="x\\"\\\\\\ny",node="n1"\} 36$/m);
  assert.match(text, /^h_bucket\{le="\+Inf",node="n1",a="y"\} 3$/m);
  // A second read counts nothing twice; the same labels in another order are the same series.
  hc.labels({ node: 'n1', a: 'x"\\\ny' }).inc(2);
  pcx.inc(2);
  assert.equal(await hot.metrics(), await plain.metrics());
  assert.equal(await hot.metrics(), await plain.metrics());

  pc.remove(x);
  hc.remove(x);
  ph.remove(x);
  hh.remove(x);
  const after = await hot.metrics();
  assert.equal(after, await plain.metrics());
  assert.doesNotMatch(after, /a="x/);
  assert.match(after, /^h_count\{node="n1",a="y"\} 3$/m);
});

test('a histogram series is listed from its first observation; a value that is not finite is ignored', async () => {
  const hot = new Registry();
  const h = new HotHistogram(hot, 'h', 'a histogram', BUCKETS);
  const s = h.labels({ node: 'n1' });
  assert.doesNotMatch(await hot.metrics(), /h_count/);
  s.observe(Number.NaN);
  s.observe(Number.POSITIVE_INFINITY);
  assert.doesNotMatch(await hot.metrics(), /h_count/);
  s.observe(2);
  const text = await hot.metrics();
  assert.match(text, /^h_bucket\{le="1",node="n1"\} 0$/m);
  assert.match(text, /^h_bucket\{le="\+Inf",node="n1"\} 1$/m);
  assert.match(text, /^h_sum\{node="n1"\} 2$/m);
  assert.deepEqual((await hot.getMetricsAsJSON())[0]!.values.at(-1), {
    value: 1,
    metricName: 'h_count',
    labels: { node: 'n1' },
  });
});

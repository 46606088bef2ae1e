import type { ActivityMinute } from './extensions.js';

const NS = 'http://www.w3.org/2000/svg';

function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number>,
  text?: string,
): SVGElementTagNameMap[K] {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

/**
 * The counts of docs/monitoring.md's table ("One count per event"), as GetQueueActivity
 * gives them, drawn in this order: Received (dashed) after Deleted, which it usually
 * equals, so neither hides the other.
 */
const SERIES: [keyof ActivityMinute, string][] = [
  ['Sent', 'sent'],
  ['Deleted', 'deleted'],
  ['Received', 'received'],
  ['DeadLettered', 'dead-lettered'],
  ['DeadLetterArrivals', 'arrived'],
];
const LABELS: Partial<Record<keyof ActivityMinute, string>> = {
  DeadLettered: 'Dead-lettered',
  DeadLetterArrivals: 'Dead-letter arrivals',
  Depth: 'Depth (right scale)',
};

/** The last hour per minute as an inline SVG line chart: no chart library, nothing to load. */
export function activityChart(minutes: ActivityMinute[]): SVGSVGElement {
  // About the width it is shown at, so its text stays near the page's size.
  const width = 960;
  const height = 160;
  // The right margin holds the depth's own scale.
  const pad = { left: 36, right: 44, top: 8, bottom: 20 };
  const max = Math.max(1, ...minutes.flatMap((m) => SERIES.map(([k]) => Number(m[k]))));
  const x = (i: number) => pad.left + (i / Math.max(1, minutes.length - 1)) * (width - pad.left - pad.right);
  const y = (v: number) => height - pad.bottom - (v / max) * (height - pad.top - pad.bottom);
  const root = svg('svg', {
    viewBox: `0 0 ${width} ${height}`,
    class: 'chart',
    role: 'img',
    'aria-label': 'Messages per minute over the last hour',
  });
  for (const v of [0, max]) {
    root.append(svg('line', { x1: pad.left, x2: width - pad.right, y1: y(v), y2: y(v), class: 'grid' }));
    root.append(svg('text', { x: pad.left - 6, y: y(v) + 4, 'text-anchor': 'end', class: 'axis' }, String(v)));
  }
  root.append(svg('text', { x: pad.left, y: height - 4, class: 'axis' }, '60 min ago'));
  root.append(svg('text', { x: width - pad.right, y: height - 4, 'text-anchor': 'end', class: 'axis' }, 'now'));
  for (const [key, cls] of SERIES) {
    const points = minutes.map((m, i) => `${x(i).toFixed(1)},${y(Number(m[key])).toFixed(1)}`).join(' ');
    root.append(svg('polyline', { points, class: `series ${cls}` }));
  }
  // The depth has its own scale (right axis): a backlog would flatten the per-minute counts.
  const maxDepth = Math.max(1, ...minutes.map((m) => m.Depth));
  const yd = (v: number) => height - pad.bottom - (v / maxDepth) * (height - pad.top - pad.bottom);
  root.append(
    svg('polyline', {
      points: minutes.map((m, i) => `${x(i).toFixed(1)},${yd(m.Depth).toFixed(1)}`).join(' '),
      class: 'series depth',
    }),
  );
  for (const v of [0, Math.round(maxDepth / 2), maxDepth]) {
    root.append(svg('line', { x1: width - pad.right, x2: width - pad.right + 4, y1: yd(v), y2: yd(v), class: 'grid' }));
    root.append(svg('text', { x: width - pad.right + 6, y: yd(v) + 4, class: 'axis depth' }, String(v)));
  }
  return root;
}

export function chartLegend(): HTMLElement {
  const el = document.createElement('p');
  el.className = 'legend';
  for (const [key, cls] of [...SERIES, ['Depth', 'depth'] as const]) {
    const item = document.createElement('span');
    item.className = `key ${cls}`;
    item.textContent = LABELS[key] ?? key;
    el.append(item);
  }
  return el;
}

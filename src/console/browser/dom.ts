/** Small DOM helpers for the console's pages: no framework, text is never parsed as HTML. */
import { pageRegion } from './api.js';

type Child = Node | string | number | null | undefined | false | Child[];
type Attrs = Record<string, string | number | boolean | undefined | ((ev: Event) => void)>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') el.addEventListener(name.replace(/^on/, ''), value);
    else if (value === true) el.setAttribute(name, '');
    else el.setAttribute(name, String(value));
  }
  append(el, children);
  return el;
}

function append(el: Element, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(typeof c === 'object' ? c : String(c));
  }
}

export function replace(el: Element, ...children: (Child | Child[])[]): void {
  el.replaceChildren();
  append(el, children);
}

export const content = (): HTMLElement => document.getElementById('content')!;
export const mainData = (name: string): string => document.getElementById('main')!.dataset[name] ?? '';

/** A queue's page, in the region of the current page unless another is given. */
export function queueHref(name: string, sub = '', region = pageRegion()): string {
  return `/console/queues/${encodeURIComponent(name)}${sub}${region ? `?region=${encodeURIComponent(region)}` : ''}`;
}

/** `href` with more query parameters. */
export function withQuery(href: string, query: string): string {
  return query ? `${href}${href.includes('?') ? '&' : '?'}${query}` : href;
}

export function queueNameOf(urlOrArn: string): string {
  return urlOrArn.slice(Math.max(urlOrArn.lastIndexOf('/'), urlOrArn.lastIndexOf(':')) + 1);
}

export function count(n: number | string | undefined): string {
  return n === undefined ? '–' : Number(n).toLocaleString('en-US');
}

/** A rate in messages per second: "0", "0.02", "1.5", "1,250". */
export function perSecond(n: number | undefined): string {
  if (n === undefined) return '–';
  if (n === 0) return '0';
  if (n < 0.01) return '<0.01';
  return n < 1 ? n.toFixed(2) : n < 100 ? n.toFixed(1) : count(Math.round(n));
}

/** 95 → "1 min 35 s"; a compact age or duration. */
export function duration(seconds: number | undefined): string {
  if (seconds === undefined || !Number.isFinite(seconds)) return '–';
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min${s % 60 ? ` ${s % 60} s` : ''}`;
  if (s < 86400)
    return `${Math.floor(s / 3600)} h${Math.floor((s % 3600) / 60) ? ` ${Math.floor((s % 3600) / 60)} min` : ''}`;
  return `${Math.floor(s / 86400)} d${Math.floor((s % 86400) / 3600) ? ` ${Math.floor((s % 86400) / 3600)} h` : ''}`;
}

/** Epoch ms → "2026-02-03 14:05:09 UTC": UTC, as the CLI and the logs show times, with the zone said. */
export function time(ms: number | string | undefined): string {
  if (ms === undefined || ms === '') return '–';
  return `${new Date(Number(ms)).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** "2026-02-03 14:05:09" or "2026-02-03T14:05" (UTC, as the console shows times) → epoch ms; NaN when it is not one. */
export function parseUtc(text: string): number {
  const m = /^(\d{4}-\d{2}-\d{2})(?:[ T](\d{2}:\d{2}(?::\d{2})?))?(?: ?UTC| ?Z)?$/.exec(text.trim());
  return m ? Date.parse(`${m[1]}T${m[2] ?? '00:00'}Z`) : Number.NaN;
}

export function badge(
  text: string,
  tone: 'neutral' | 'danger' | 'warn' | 'ok' | 'info' = 'neutral',
  title?: string,
): HTMLElement {
  return h('span', { class: `badge ${tone}`, title }, text);
}

/** A message in the page's flash area: errors stay until replaced, notices fade. */
export function flash(message: string, tone: 'error' | 'notice' = 'notice'): void {
  let area = document.getElementById('flash');
  if (!area) {
    area = h('div', { id: 'flash', role: 'status' });
    document.getElementById('main')!.prepend(area);
  }
  replace(area, h('p', { class: tone }, message));
}

export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** A <dl> of label → value rows. */
export function facts(rows: [string, Child | Child[]][]): HTMLElement {
  return h(
    'dl',
    { class: 'facts' },
    rows.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v as Child)]),
  );
}

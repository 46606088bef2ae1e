/** Reading Prometheus's text format in tests: samples by name and labels. */
import { fileURLToPath } from 'node:url';

/** docs/monitoring/, where the shipped rules are. */
export const MONITORING = fileURLToPath(new URL('../../../docs/monitoring/', import.meta.url));

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Every sample of a scrape (comments skipped). */
export function parseScrape(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!.replace(/\\(.)/g, '$1');
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

/** The samples of `name` whose labels include `labels`. */
export function samples(text: string | Sample[], name: string, labels: Record<string, string> = {}): Sample[] {
  const all = typeof text === 'string' ? parseScrape(text) : text;
  return all.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

/** The sum of the matching samples; 0 when there is none (a counter not yet incremented). */
export function total(text: string | Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples(text, name, labels).reduce((n, s) => n + s.value, 0);
}

/** The value of the one matching sample; fails when there is none or several. */
export function single(text: string | Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples(text, name, labels);
  if (found.length !== 1)
    throw new Error(`${name}${JSON.stringify(labels)}: expected one sample, found ${found.length}`);
  return found[0]!.value;
}

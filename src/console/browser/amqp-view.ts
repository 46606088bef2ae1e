import type { Death, PeekedMessage } from './api.js';
import { count, facts, h, queueHref, time } from './dom.js';

/**
 * What AMQP users look at on a message page: the exchange and routing keys it was
 * published with, its content properties, its headers with their field types, x-death
 * (built from the death history, as consumers receive it), and a binary body as hex or
 * base64 with its content type. PeekMessages gives the properties as typed JSON
 * (src/protocols/amqp/property-json.ts).
 */

type Typed = { type?: string; value?: unknown; base64?: string };

/** A typed header value as text: strings plain, tables and arrays nested. */
function headerText(v: unknown): string {
  const t = v as Typed | null;
  if (!t || typeof t !== 'object' || typeof t.type !== 'string') return JSON.stringify(v);
  if (t.base64 !== undefined) return `base64 ${t.base64}`;
  if (t.type === 'A') return `[${(t.value as unknown[]).map(headerText).join(', ')}]`;
  if (t.type === 'F')
    return `{${Object.entries(t.value as object)
      .map(([k, x]) => `${k}: ${headerText(x)}`)
      .join(', ')}}`;
  if (t.type === 'T') return `${String(t.value)} (${time(Number(t.value) * 1000)})`;
  if (t.type === 'D') {
    const d = t.value as { places: number; digits: number };
    return String(d.digits / 10 ** d.places);
  }
  return typeof t.value === 'string' ? t.value : JSON.stringify(t.value);
}

const TYPE_NAMES: Record<string, string> = {
  S: 'string',
  x: 'bytes',
  t: 'boolean',
  b: 'int8',
  B: 'uint8',
  s: 'int16',
  u: 'uint16',
  I: 'int32',
  i: 'uint32',
  l: 'int64',
  T: 'timestamp',
  f: 'float',
  d: 'double',
  D: 'decimal',
  A: 'array',
  F: 'table',
  V: 'void',
};

const propertyText = (k: string, v: unknown) =>
  k === 'timestamp' && typeof v === 'number' ? `${v} (${time(v * 1000)})` : String(v);

/** x-death as RabbitMQ delivers it: one row per {queue, reason}, newest first. */
function xDeathTable(deaths: Death[]): HTMLElement {
  return h(
    'table',
    { class: 'attrs', id: 'x-death' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ['count', 'reason', 'queue', 'exchange', 'routing-keys', 'time', 'original-expiration'].map((c) =>
          h('th', {}, c),
        ),
      ),
    ),
    h(
      'tbody',
      {},
      deaths.map((d) =>
        h(
          'tr',
          {},
          h('td', { class: 'num' }, count(d.count)),
          h('td', {}, d.reason),
          h('td', {}, h('a', { href: queueHref(d.queue) }, d.queue)),
          h('td', { class: 'mono' }, d.exchange === undefined ? '–' : d.exchange === '' ? '(default)' : d.exchange),
          h('td', { class: 'mono' }, (d.routingKeys ?? [d.queue]).join(', ')),
          h('td', {}, time(d.firstTime)),
          h('td', { class: 'mono' }, d.originalExpiration ?? '–'),
        ),
      ),
    ),
  );
}

/** The AMQP section of a message page; nothing for a message sent over SQS that never died through AMQP. */
export function amqpSection(m: PeekedMessage): HTMLElement[] {
  const a = m.Amqp;
  const deaths = m.DeathHistory ?? [];
  if (!a && !deaths.some((d) => d.exchange !== undefined)) return [];
  const out: HTMLElement[] = [h('h2', {}, 'AMQP')];
  if (a) {
    const { headers, ...props } = a.Properties;
    out.push(
      h(
        'div',
        { id: 'amqp-properties' },
        facts([
          ['Exchange', h('code', {}, a.Exchange === '' ? '(default)' : a.Exchange)],
          ['Routing key', h('code', {}, a.RoutingKey)],
          ...(a.RoutingKeys?.length ? [['More routing keys', a.RoutingKeys.join(', ')] as [string, string]] : []),
          ...Object.entries(props).map(([k, v]) => [k, propertyText(k, v)] as [string, string]),
        ]),
      ),
    );
    const entries = Object.entries((headers ?? {}) as Record<string, Typed>);
    if (entries.length) {
      out.push(
        h('h3', {}, 'Headers'),
        h(
          'table',
          { class: 'attrs', id: 'amqp-headers' },
          h('thead', {}, h('tr', {}, h('th', {}, 'Name'), h('th', {}, 'Type'), h('th', {}, 'Value'))),
          h(
            'tbody',
            {},
            entries.map(([k, v]) =>
              h(
                'tr',
                {},
                h('td', { class: 'mono' }, k),
                h('td', {}, `${TYPE_NAMES[v.type ?? ''] ?? v.type} (${v.type})`),
                h('td', { class: 'mono' }, headerText(v)),
              ),
            ),
          ),
        ),
      );
    }
  }
  if (deaths.length) out.push(h('h3', {}, 'x-death (as AMQP consumers receive it)'), xDeathTable(deaths));
  return out;
}

function hexDump(bytes: Uint8Array): string {
  const lines: string[] = [];
  for (let i = 0; i < bytes.length; i += 16) {
    const row = bytes.subarray(i, i + 16);
    const hex = Array.from(row, (b) => b.toString(16).padStart(2, '0')).join(' ');
    const ascii = Array.from(row, (b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '.')).join('');
    lines.push(`${i.toString(16).padStart(8, '0')}  ${hex.padEnd(47)}  ${ascii}`);
  }
  return lines.join('\n');
}

/** A binary body (stored base64): its content type and size, shown as a hex dump or as base64. */
export function binaryBodyView(base64: string, contentType: unknown): HTMLElement {
  const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  const pre = h('pre', { id: 'message-body', class: 'hex' }, hexDump(bytes));
  const show = (mode: 'hex' | 'base64') => {
    pre.textContent = mode === 'hex' ? hexDump(bytes) : base64;
    pre.className = mode;
  };
  return h(
    'figure',
    { class: 'body' },
    h(
      'figcaption',
      {},
      'Binary',
      h(
        'span',
        { class: 'muted' },
        ` · ${typeof contentType === 'string' ? `${contentType} · ` : ''}${count(bytes.length)} bytes`,
      ),
      ' ',
      h('button', { type: 'button', class: 'small', id: 'body-hex', onclick: () => show('hex') }, 'Hex'),
      h('button', { type: 'button', class: 'small', id: 'body-base64', onclick: () => show('base64') }, 'Base64'),
    ),
    pre,
  );
}

/** How a death's reason reads: a rejection over AMQP is told apart from RejectMessage. */
export function rejectedOverAmqp(d: Pick<Death, 'reason' | 'exchange'>): boolean {
  return d.reason === 'rejected' && d.exchange !== undefined;
}

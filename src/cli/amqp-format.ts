/** How `dlq peek` prints what AMQP users look at: exchange, routing keys, properties, headers, binary bodies. */
import type { AmqpView } from '../wire/messages.js';

/** A typed header value as text: strings plain, numbers as numbers, tables and arrays nested. */
function headerValue(v: unknown): string {
  const t = v as { type?: string; value?: unknown; base64?: string } | null;
  if (!t || typeof t !== 'object' || typeof t.type !== 'string') return JSON.stringify(v);
  if (t.base64 !== undefined) return `<${t.type === 'x' ? 'bytes' : 'binary'} base64 ${t.base64}>`;
  if (t.type === 'A') return `[${(t.value as unknown[]).map(headerValue).join(', ')}]`;
  if (t.type === 'F')
    return `{${Object.entries(t.value as object)
      .map(([k, x]) => `${k}: ${headerValue(x)}`)
      .join(', ')}}`;
  if (t.type === 'T') return `${String(t.value)} (${new Date(Number(t.value) * 1000).toISOString()})`;
  if (t.type === 'D') {
    const d = t.value as { places: number; digits: number };
    return String(d.digits / 10 ** d.places);
  }
  return typeof t.value === 'string' ? t.value : JSON.stringify(t.value);
}

/** The AMQP lines of a peeked message: where it was published, its properties, its headers (x-death aside: the history shows it). */
export function amqpLines(a: AmqpView | undefined): string[] {
  if (!a) return [];
  const more = a.RoutingKeys?.length ? ` (and ${a.RoutingKeys.join(', ')})` : '';
  const lines = [
    `  amqp: exchange ${a.Exchange === '' ? '(default)' : a.Exchange}, routing key ${a.RoutingKey}${more}`,
  ];
  const { headers, ...props } = a.Properties;
  const shown = Object.entries(props).map(
    ([k, v]) => `${k}=${k === 'timestamp' && typeof v === 'number' ? new Date(v * 1000).toISOString() : String(v)}`,
  );
  if (shown.length) lines.push(`  properties: ${shown.join(', ')}`);
  for (const [k, v] of Object.entries((headers ?? {}) as Record<string, unknown>)) {
    lines.push(`  header ${k} (${(v as { type?: string }).type ?? '?'}): ${headerValue(v)}`);
  }
  return lines;
}

/** A body stored base64 (not UTF-8 text): its size, content type, and hex and base64 views. */
export function binaryBodyLines(body: string, contentType: unknown, full: boolean): string[] {
  const bytes = Buffer.from(body, 'base64');
  const hexShown = full ? bytes : bytes.subarray(0, 64);
  const hex = hexShown.toString('hex').replace(/(..)(?!$)/g, '$1 ') + (hexShown.length < bytes.length ? ' …' : '');
  return [
    `  body: binary, ${bytes.length} bytes${typeof contentType === 'string' ? `, ${contentType}` : ''}`,
    `    hex: ${hex}`,
    `    base64: ${full || body.length <= 200 ? body : `${body.slice(0, 200)}… (--full shows all)`}`,
  ];
}

/** What an AMQP death adds to its history line: the exchange and routing keys it was published with. */
export function amqpDeathDetail(d: {
  exchange?: string;
  routingKeys?: string[];
  originalExpiration?: string;
}): string[] {
  if (d.exchange === undefined) return [];
  const out = [`exchange ${d.exchange === '' ? '(default)' : d.exchange}`];
  if (d.routingKeys?.length) out.push(`routing keys ${d.routingKeys.join(', ')}`);
  if (d.originalExpiration !== undefined) out.push(`expiration ${d.originalExpiration} ms`);
  return out;
}

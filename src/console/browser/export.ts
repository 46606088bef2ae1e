import type { PeekedMessage } from './api.js';

/** Downloads messages as JSON lines, made in the browser from what the page already has. */
export function downloadJsonLines(queue: string, messages: PeekedMessage[]): void {
  const lines = `${messages.map((m) => JSON.stringify(m)).join('\n')}\n`;
  const url = URL.createObjectURL(new Blob([lines], { type: 'application/x-ndjson' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = `${queue}-${new Date().toISOString().replace(/[:.]/g, '-')}.jsonl`;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

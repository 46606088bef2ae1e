/** How the client commands print queues, messages and move tasks for people. */
import type { Death, PeekedMessage } from '../wire/messages.js';
import { filterText, name, time, type MoveTask } from '../wire/move-tasks.js';
import { amqpDeathDetail, amqpLines, binaryBodyLines } from './amqp-format.js';

/** An age in seconds, short: 45s, 12m, 3h, 2d. */
export function age(seconds: number | undefined): string {
  if (seconds === undefined) return '-';
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 172_800) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86_400)}d`;
}

/**
 * Left-aligned columns, two spaces apart. On a terminal, the last column is cut to fit
 * its width (piped output keeps everything, for grep).
 */
export function table(rows: string[][], width = process.stdout.isTTY ? process.stdout.columns : undefined): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return `${rows
    .map((r) => {
      const line = r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ');
      return width && line.length > width && width > 20 ? `${line.slice(0, width - 1)}…` : line;
    })
    .join('\n')}\n`;
}

/** The id part of a task handle (base64 of `{"taskId", "sourceArn"}`), its first 8 characters. */
export function shortTaskId(handle: string | undefined): string {
  if (!handle) return '-';
  try {
    const v = JSON.parse(Buffer.from(handle, 'base64').toString('utf8')) as { taskId?: string };
    return v.taskId ? v.taskId.slice(0, 8) : handle.slice(0, 8);
  } catch {
    return handle.slice(0, 8);
  }
}

export function progress(t: MoveTask): string {
  const total = t.ApproximateNumberOfMessagesToMove;
  // A filtered task's total may be a lower bound (the server counts a bounded part of a large queue).
  const pct = total ? ` (${Math.min(100, Math.floor((100 * t.ApproximateNumberOfMessagesMoved) / total))}%)` : '';
  const rate = t.MaxNumberOfMessagesPerSecond ? `, at most ${t.MaxNumberOfMessagesPerSecond}/s` : '';
  const reason = t.FailureReason ? `: ${t.FailureReason}` : '';
  return `${t.Status}${reason}  moved ${t.ApproximateNumberOfMessagesMoved}/${total ?? '?'}${pct}${rate}`;
}

export const TASK_HEADER = ['ID', 'STARTED', 'STATUS', 'MOVED', 'DESTINATION', 'FILTER'];

export function taskLine(t: MoveTask): string[] {
  return [
    shortTaskId(t.TaskHandle),
    time(t.StartedTimestamp).replace(/\.\d+Z$/, 'Z'),
    t.Status,
    `${t.ApproximateNumberOfMessagesMoved}/${t.ApproximateNumberOfMessagesToMove ?? '?'}`,
    t.DestinationArn ? name(t.DestinationArn) : '(sources)',
    filterText(t.Filter) + (t.FailureReason ? `; ${t.FailureReason}` : ''),
  ];
}

const BODY_CHARS = 200;

/** A body under `  body:`: one line beside it, several indented beneath it, cut unless `full`. */
function bodyLines(body: string, full: boolean): string[] {
  const cut =
    !full && body.length > BODY_CHARS ? `${body.slice(0, BODY_CHARS)}… (${body.length} chars; --full shows all)` : body;
  const lines = cut.split(/\r?\n/);
  return lines.length === 1 ? [`  body: ${cut}`] : ['  body:', ...lines.map((l) => `    ${l}`)];
}

/** When and where it was dead-lettered; an imported message knows only where (its history says when). */
function deadLettered(m: PeekedMessage): string {
  const source = m.Attributes.DeadLetterQueueSourceArn;
  if (m.DeadLetteredTimestamp !== undefined)
    return `  dead-lettered ${time(m.DeadLetteredTimestamp)} from ${name(source)}`;
  return source ? `  dead-letter source ${name(source)}` : '';
}

/** Two readings of the clock in one dead-lettering (the move's, the history's) are this close. */
const ONE_EVENT_MS = 1_000;

/**
 * A death's times, each event once: none for the newest death when it is the dead-lettering
 * the line above already dated, one time for a single death, else the first and the last.
 */
function deathTimes(m: PeekedMessage, d: Death, newest: number): string {
  const dated = m.DeadLetteredTimestamp;
  if (
    newest === 0 &&
    d.count === 1 &&
    dated !== undefined &&
    d.queueArn === m.Attributes.DeadLetterQueueSourceArn &&
    Math.abs(d.lastTime - dated) < ONE_EVENT_MS
  )
    return '';
  if (d.count === 1 || d.firstTime === d.lastTime) return `, ${time(d.lastTime)}`;
  return `, ${time(d.firstTime)} .. ${time(d.lastTime)}`;
}

export const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

export function peeked(m: PeekedMessage, full: boolean): string {
  const a = m.Attributes;
  const fifo = [
    a.MessageGroupId !== undefined ? `group ${a.MessageGroupId}` : '',
    a.MessageDeduplicationId !== undefined ? `dedup ${a.MessageDeduplicationId}` : '',
  ]
    .filter(Boolean)
    .join('  ');
  const lines = [
    `#${m.Position}  ${m.MessageId}  ${m.State}  received ${a.ApproximateReceiveCount ?? 0}x${fifo ? `  ${fifo}` : ''}`,
    `  sent ${time(a.SentTimestamp)}${deadLettered(m)}`,
  ];
  const attrs = Object.entries(m.MessageAttributes ?? {}).map(([k, v]) => `${k}=${v.StringValue ?? `<${v.DataType}>`}`);
  if (attrs.length) lines.push(`  attributes: ${attrs.join(', ')}`);
  // The dead-letter history, newest first: one line per {queue, reason}.
  for (const [i, d] of (m.DeathHistory ?? []).entries()) {
    const extra = [
      d.rejectReason !== undefined ? `reason "${d.rejectReason}"` : '',
      d.originalTtlSeconds !== undefined ? `ttl ${d.originalTtlSeconds}s` : '',
      ...amqpDeathDetail(d),
    ]
      .filter(Boolean)
      .join(', ');
    const reason =
      d.reason === 'rejected' && d.exchange !== undefined
        ? 'rejected over AMQP (basic.reject or basic.nack)'
        : d.reason;
    lines.push(`  died ${d.count}x in ${d.queue}: ${reason}${deathTimes(m, d, i)}${extra ? `  (${extra})` : ''}`);
  }
  lines.push(...amqpLines(m.Amqp));
  lines.push(
    ...(m.BodyEncoding === 'base64'
      ? binaryBodyLines(m.Body, m.Amqp?.Properties.contentType, full)
      : bodyLines(m.Body, full)),
  );
  return `${lines.join('\n')}\n`;
}

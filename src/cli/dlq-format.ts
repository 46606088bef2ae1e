/** How the `redrive dlq` commands print things. */

export interface MoveTask {
  TaskHandle?: string;
  Status: string;
  SourceArn: string;
  DestinationArn?: string;
  MaxNumberOfMessagesPerSecond?: number;
  ApproximateNumberOfMessagesMoved: number;
  ApproximateNumberOfMessagesToMove?: number;
  FailureReason?: string;
  StartedTimestamp: number;
}

export interface PeekedMessage {
  MessageId: string;
  Body: string;
  Attributes: Record<string, string>;
  MessageAttributes?: Record<string, { DataType: string; StringValue?: string; BinaryValue?: string }>;
  Position: number;
  State: string;
  DeadLetteredTimestamp?: number;
  DeathHistory?: { queue: string; reason: string; count: number; firstTime: number; lastTime: number; rejectReason?: string; originalTtlSeconds?: number }[];
}

const time = (ms: number | string | undefined) => (ms === undefined ? '-' : new Date(Number(ms)).toISOString());
const name = (arn: string | undefined) => (arn ? arn.split(':').pop()! : '-');

/** Left-aligned columns, two spaces apart. */
export function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n') + '\n';
}

export function progress(t: MoveTask): string {
  const total = t.ApproximateNumberOfMessagesToMove;
  const pct = total ? ` (${Math.floor((100 * t.ApproximateNumberOfMessagesMoved) / total)}%)` : '';
  const rate = t.MaxNumberOfMessagesPerSecond ? `, at most ${t.MaxNumberOfMessagesPerSecond}/s` : '';
  const reason = t.FailureReason ? `: ${t.FailureReason}` : '';
  return `${t.Status}${reason}  moved ${t.ApproximateNumberOfMessagesMoved}/${total ?? '?'}${pct}${rate}`;
}

export function taskLine(t: MoveTask): string[] {
  return [time(t.StartedTimestamp), t.Status, `${t.ApproximateNumberOfMessagesMoved}/${t.ApproximateNumberOfMessagesToMove ?? '?'}`,
    t.DestinationArn ? name(t.DestinationArn) : '(sources)', t.FailureReason ?? t.TaskHandle ?? ''];
}

export function peeked(m: PeekedMessage, full: boolean): string {
  const a = m.Attributes;
  const lines = [
    `#${m.Position}  ${m.MessageId}  ${m.State}  received ${a.ApproximateReceiveCount ?? 0}x`,
    `  sent ${time(a.SentTimestamp)}${m.DeadLetteredTimestamp !== undefined ? `  dead-lettered ${time(m.DeadLetteredTimestamp)} from ${name(a.DeadLetterQueueSourceArn)}` : ''}`,
  ];
  const attrs = Object.entries(m.MessageAttributes ?? {}).map(([k, v]) => `${k}=${v.StringValue ?? `<${v.DataType}>`}`);
  if (attrs.length) lines.push(`  attributes: ${attrs.join(', ')}`);
  // The dead-letter history, newest first: one line per {queue, reason}.
  for (const d of m.DeathHistory ?? []) {
    const extra = [d.rejectReason !== undefined ? `reason "${d.rejectReason}"` : '', d.originalTtlSeconds !== undefined ? `ttl ${d.originalTtlSeconds}s` : '']
      .filter(Boolean).join(', ');
    lines.push(`  died ${d.count}x in ${d.queue}: ${d.reason}, ${time(d.firstTime)} .. ${time(d.lastTime)}${extra ? `  (${extra})` : ''}`);
  }
  const body = !full && m.Body.length > 200 ? `${m.Body.slice(0, 200)}… (${m.Body.length} chars)` : m.Body;
  lines.push(`  body: ${body}`);
  return lines.join('\n') + '\n';
}

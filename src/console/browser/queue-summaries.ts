import type { QueueSummary, Rates } from '../../wire/queue-summaries.js';

export type { QueueSummary, Rates };

/** The ARN a RedrivePolicy names, if it parses. */
export function deadLetterTargetOf(
  redrivePolicy: string | undefined,
): { arn: string; maxReceiveCount: number } | undefined {
  if (!redrivePolicy) return undefined;
  try {
    const p = JSON.parse(redrivePolicy) as { deadLetterTargetArn?: string; maxReceiveCount?: number | string };
    return p.deadLetterTargetArn
      ? { arn: p.deadLetterTargetArn, maxReceiveCount: Number(p.maxReceiveCount) }
      : undefined;
  } catch {
    return undefined;
  }
}

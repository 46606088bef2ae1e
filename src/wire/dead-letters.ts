/** GetDeadLetterBreakdown's answer (docs/extensions.md): what a dead-letter queue holds, by source and by reason. */
export interface DeadLetterBreakdown {
  BySource: { SourceArn: string; Count: number; OldestTimestamp: number; NewestTimestamp: number }[];
  ByReason: { Reason: string; Count: number; OldestTimestamp: number; NewestTimestamp: number }[];
  ByRejectionReason?: { Reason: string; Count: number }[];
  RejectionReasonsExamined?: number;
  RejectionReasonsComplete?: boolean;
}

import type { Command } from 'commander';
import { clientCommand, group, out, printJson } from './command-kit.js';
import { name, time } from '../wire/move-tasks.js';
import { age, table } from './dlq-format.js';
import { peekCommand } from './peek.js';
import { cancelCommand, redriveCommand, tasksCommand, watchCommand } from './dlq-redrive.js';
import type { DeadLetterBreakdown } from '../wire/dead-letters.js';
import type { QueueSummary } from '../wire/queue-summaries.js';
import { allSummaries } from './summaries.js';
import { cyclesQueueName } from '../engine/dead-letters/dead-letter-queue.js';

/** `redrive dlq ...`: inspect dead-letter queues and redrive them, against a running server. */
export function dlqCommand(): Command {
  const dlq = group('dlq', 'Dead-letter queues: list, peek, why, redrive, tasks, watch, cancel', [
    'redrive dlq list',
    'redrive dlq why orders-dlq',
    'redrive dlq redrive orders-dlq --source orders --watch',
  ]);
  clientCommand(
    dlq,
    'list',
    'List the dead-letter queues with their depth and source queues (and redrive-cycles while it holds messages)',
    [
      'redrive dlq list',
      'redrive dlq list --json',
      'AWS_PROFILE=team-a redrive dlq list --endpoint https://queues.internal:9324',
    ],
    async ({ sqs, opts }) => {
      const rows = deadLetterQueues(await allSummaries(sqs));
      if (opts.json) return printJson(rows);
      if (!rows.length) return out('no dead-letter queues (no queue has a RedrivePolicy)\n');
      out(
        table([
          ['DEAD-LETTER QUEUE', 'MESSAGES', 'IN FLIGHT', 'OLDEST', 'SOURCES'],
          ...rows.map((r) => [
            r.queue,
            String(r.visible),
            String(r.inflight),
            age(r.oldestSeconds),
            r.sources.join(', '),
          ]),
        ]),
      );
    },
  );
  peekCommand(dlq, 'dlq', 'dead-letter queue');
  clientCommand(
    dlq,
    'why <dlq>',
    "Why messages are in a dead-letter queue: counts by the queue they died in, by reason, and the consumers' top rejection texts",
    ['redrive dlq why orders-dlq', 'redrive dlq why orders-dlq --json'],
    async ({ sqs, opts }, queue: string) => {
      const url = await sqs.queueUrl(queue, 'dead-letter queue');
      const b = await sqs.call<DeadLetterBreakdown>('GetDeadLetterBreakdown', { QueueUrl: url });
      if (opts.json) return printJson(b);
      if (!b.BySource.length) return out(`no dead-lettered messages in ${queue}\n`);
      out(
        table([
          ['DIED IN', 'MESSAGES', 'FIRST', 'LAST'],
          ...b.BySource.map((s) => [
            name(s.SourceArn),
            String(s.Count),
            time(s.OldestTimestamp),
            time(s.NewestTimestamp),
          ]),
        ]),
      );
      out('\n');
      out(
        table([
          ['REASON', 'MESSAGES', 'MEANING'],
          ...b.ByReason.map((r) => [r.Reason, String(r.Count), REASONS[r.Reason] ?? '']),
        ]),
      );
      if (b.ByRejectionReason?.length) {
        out('\n');
        out(
          table([
            ['REJECTED WITH', 'MESSAGES'],
            ...b.ByRejectionReason.map((r) => [
              r.Reason === '' ? '(no reason given)' : JSON.stringify(r.Reason),
              String(r.Count),
            ]),
          ]),
        );
        if (!b.RejectionReasonsComplete) out(`(counted over the first ${b.RejectionReasonsExamined} messages)\n`);
      }
      out(`\nredrive one source: redrive dlq redrive ${queue} --source ${name(b.BySource[0]!.SourceArn)} --dry-run\n`);
    },
  );
  redriveCommand(dlq);
  tasksCommand(dlq);
  watchCommand(dlq);
  cancelCommand(dlq);
  return dlq;
}

const REASONS: Record<string, string> = {
  delivery_limit: 'received more than maxReceiveCount times',
  rejected: 'rejected by a consumer (RejectMessage)',
  expired: 'its time-to-live ran out',
  maxlen: 'pushed out of a full queue',
};

/** A row of `dlq list` (its --json keeps the names it has always had: queue, visible, inflight, sources). */
export interface DlqRow {
  queue: string;
  url: string;
  visible: number;
  inflight: number;
  delayed: number;
  oldestSeconds?: number;
  sources: string[];
}

/** The queues some queue dead-letters into, and redrive-cycles while it holds messages. */
export function deadLetterQueues(all: QueueSummary[]): DlqRow[] {
  const cycles = [cyclesQueueName(false), cyclesQueueName(true)];
  return all.flatMap((q) => {
    const held =
      q.ApproximateNumberOfMessages + q.ApproximateNumberOfMessagesNotVisible + q.ApproximateNumberOfMessagesDelayed;
    const isCycles = cycles.includes(q.QueueName);
    if (!q.DeadLetterSourceQueueUrls.length && !(isCycles && held > 0)) return [];
    return [
      {
        queue: q.QueueName,
        url: q.QueueUrl,
        visible: q.ApproximateNumberOfMessages,
        inflight: q.ApproximateNumberOfMessagesNotVisible,
        delayed: q.ApproximateNumberOfMessagesDelayed,
        oldestSeconds: q.ApproximateAgeOfOldestMessage,
        sources:
          isCycles && !q.DeadLetterSourceQueueUrls.length
            ? ['(broken dead-letter cycles)']
            : q.DeadLetterSourceQueueUrls.map(name),
      },
    ];
  });
}

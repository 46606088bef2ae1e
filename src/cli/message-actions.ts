import type { Command } from 'commander';
import { clientCommand, out, printJson } from './command-kit.js';
import type { ByIdFailure, MoveMessagesByIdResult } from '../wire/by-id.js';
import { name } from '../wire/move-tasks.js';
import { seconds } from './flags.js';

/**
 * `redrive messages visible` and `redrive messages move`: an operator's actions on messages
 * by id (ChangeMessageVisibilityById, MoveMessagesById in docs/extensions.md).
 */
export function messageActionCommands(messages: Command): void {
  clientCommand<{ timeout: string }>(
    messages,
    'visible <queue> <message-id>',
    'Make an in-flight message visible now, or change how long it stays in flight (--timeout), by its id',
    [
      'redrive messages visible orders 6f1c2a4e-0000-4000-8000-000000000000',
      'redrive messages visible orders 6f1c2a4e-0000-4000-8000-000000000000 --timeout 600',
    ],
    async ({ sqs, opts }, queue: string, id: string) => {
      const timeout = seconds(opts.timeout, '--timeout', 43_200);
      const url = await sqs.queueUrl(queue);
      await sqs.call('ChangeMessageVisibilityById', { QueueUrl: url, MessageId: id, VisibilityTimeout: timeout });
      if (opts.json) return printJson({ MessageId: id, VisibilityTimeout: timeout });
      out(
        timeout === 0
          ? `message ${id} is visible again in ${queue}\n`
          : `message ${id} stays in flight in ${queue} for ${timeout} s from now\n`,
      );
    },
  ).option(
    '--timeout <seconds>',
    'seconds the message stays in flight from now (0 to 43200; 0 makes it visible now)',
    '0',
  );

  clientCommand<{ to?: string }>(
    messages,
    'move <queue> <message-id...>',
    'Redrive messages by id to the queue each died in, or all to --to (a queue of the same type); each moves as a redrive moves it, with a new message id',
    [
      'redrive messages move orders-dlq 6f1c2a4e-0000-4000-8000-000000000000',
      'redrive messages move orders-dlq <id> <id> --to orders-replay',
    ],
    async ({ sqs, opts }, queue: string, ids: string[]) => {
      const url = await sqs.queueUrl(queue);
      const destination =
        opts.to === undefined ? {} : { DestinationArn: await sqs.queueArn(opts.to, 'destination queue') };
      const moved: MoveMessagesByIdResult['Successful'] = [];
      const failed: ByIdFailure[] = [];
      for (let i = 0; i < ids.length; i += 10) {
        const r = await sqs.call<Partial<MoveMessagesByIdResult>>('MoveMessagesById', {
          QueueUrl: url,
          MessageIds: ids.slice(i, i + 10),
          ...destination,
        });
        moved.push(...(r.Successful ?? []));
        failed.push(...(r.Failed ?? []));
      }
      if (failed.length) process.exitCode = 1;
      if (opts.json) return printJson({ Moved: moved, Failed: failed });
      for (const m of moved) out(`moved ${m.Id} to ${name(m.DestinationArn)} as ${m.MessageId}\n`);
      for (const f of failed) process.stderr.write(`redrive: message ${f.Id} not moved: ${f.Message} (${f.Code})\n`);
    },
  ).option('--to <queue>', 'the queue to move them to (default: the queue each message was dead-lettered from)');
}

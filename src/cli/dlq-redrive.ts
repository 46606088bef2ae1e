import type { Command } from 'commander';
import { CliError, SqsCallError } from './cli-error.js';
import { clientCommand, out, printJson } from './command-kit.js';
import { filterText, type MoveTask } from '../wire/move-tasks.js';
import { plural, progress, shortTaskId, table, TASK_HEADER, taskLine } from './dlq-format.js';
import { filterOf, withFilterFlags, type FilterOptions } from './filter-flags.js';
import { positive } from './flags.js';
import { leftBehind } from './left-behind.js';
import type { SqsJsonClient } from './sqs-client.js';

const WATCH_INTERVAL_MS = 500;

interface RedriveOptions extends FilterOptions {
  to?: string;
  rate?: string;
  watch?: boolean;
  dryRun?: boolean;
}

export function redriveCommand(dlq: Command): Command {
  return withFilterFlags(
    clientCommand<RedriveOptions>(
      dlq,
      'redrive <dlq>',
      'Move messages out of a dead-letter queue: each back to the queue it died in, or --to a queue; the filters choose which',
      [
        'redrive dlq redrive orders-dlq --watch',
        'redrive dlq redrive orders-dlq --source orders --death-reason rejected --dry-run',
        "redrive dlq redrive orders-dlq --json-path '$.type' --equals refund --to refunds --rate 50",
      ],
      async ({ sqs, opts }, queue: string) => {
        const filter = await filterOf(sqs, opts);
        const dlqUrl = await sqs.queueUrl(queue, 'dead-letter queue');
        const sourceArn = (await sqs.attributes(dlqUrl, ['QueueArn'], 'dead-letter queue')).QueueArn!;
        const input: Record<string, unknown> = { SourceArn: sourceArn };
        if (opts.to) input.DestinationArn = await sqs.queueArn(opts.to, '--to');
        if (opts.rate) input.MaxNumberOfMessagesPerSecond = positive(opts.rate, '--rate');
        if (filter) input.Filter = filter;
        if (opts.dryRun) {
          const r = await startTask<{
            ApproximateNumberOfMessagesToMove: number;
            ApproximateNumberOfMessagesToMoveIsLowerBound?: boolean;
          }>(sqs, queue, opts.to, { ...input, DryRun: true });
          if (opts.json) return printJson(r);
          // The server counts a bounded part of a large queue (docs/security.md).
          const atLeast = r.ApproximateNumberOfMessagesToMoveIsLowerBound ? 'at least ' : '';
          return out(
            `${atLeast}${plural(r.ApproximateNumberOfMessagesToMove, 'message')} would move (${filterText(filter)})\n`,
          );
        }
        const { TaskHandle } = await startTask<{ TaskHandle: string }>(sqs, queue, opts.to, input);
        if (!opts.watch) {
          if (opts.json) return printJson({ TaskHandle, TaskId: shortTaskId(TaskHandle) });
          return out(
            `started task ${shortTaskId(TaskHandle)} (${filterText(filter)})\nwatch it: redrive dlq watch ${queue}\n`,
          );
        }
        if (!opts.json) out(`started task ${shortTaskId(TaskHandle)} (${filterText(filter)})\n`);
        await watch(sqs, { queue, dlqUrl, sourceArn, json: !!opts.json, filter });
      },
    )
      .option('--to <queue>', 'destination queue (default: each message back to the queue it died in)')
      .option('--rate <n>', 'at most n messages per second (1-500)')
      .option('--watch', 'show progress until the task ends (Ctrl-C stops watching; the task goes on)')
      .option('--dry-run', 'only count the messages that would move'),
  );
}

/** StartMessageMoveTask, its refusals said in the terms of the command. */
async function startTask<T>(
  sqs: SqsJsonClient,
  queue: string,
  to: string | undefined,
  input: Record<string, unknown>,
): Promise<T> {
  try {
    return await sqs.call<T>('StartMessageMoveTask', input);
  } catch (e) {
    if (!(e instanceof SqsCallError)) throw e;
    const say = (message: string) => new CliError(message, { code: e.code, action: e.action, detail: e.apiMessage });
    if (/must be configured as a Dead Letter Queue/.test(e.apiMessage)) {
      throw say(
        `"${queue}" is not a dead-letter queue: no queue names it in its RedrivePolicy (the dead-letter queues are in \`redrive dlq list\`)`,
      );
    }
    if (/already a task running/.test(e.apiMessage)) {
      throw say(
        `a move task is already running on "${queue}": follow it with \`redrive dlq watch ${queue}\`, or cancel it with \`redrive dlq cancel ${queue}\``,
      );
    }
    if (/same type as the source/.test(e.apiMessage))
      throw say(
        `--to "${to}" is ${queue.endsWith('.fifo') ? 'a standard' : 'a FIFO'} queue and "${queue}" is not: both must be FIFO, or both standard`,
      );
    if (/must not be the source/.test(e.apiMessage))
      throw say(
        `--to "${to}" is the dead-letter queue itself: give another queue, or leave --to out to send each message back to its source`,
      );
    throw e;
  }
}

async function latestTask(sqs: SqsJsonClient, sourceArn: string): Promise<MoveTask | undefined> {
  return (await sqs.call<{ Results?: MoveTask[] }>('ListMessageMoveTasks', { SourceArn: sourceArn })).Results?.[0];
}

/**
 * Prints the task's progress until it ends, then why any message stayed behind. Ctrl-C
 * stops watching, not the task, and says so. A failed task makes the command fail.
 */
interface Watched {
  queue: string;
  dlqUrl: string;
  sourceArn: string;
  json: boolean;
  /** The task's filter, to look for what it left behind (a task started elsewhere lists its own). */
  filter?: object;
}

async function watch(sqs: SqsJsonClient, { queue, dlqUrl, sourceArn, json, filter }: Watched) {
  const tty = process.stdout.isTTY && !json;
  const onInterrupt = () => {
    process.stderr.write(
      `\nstopped watching; the task goes on on the server.\n  watch it again: redrive dlq watch ${queue}\n  cancel it:      redrive dlq cancel ${queue}\n`,
    );
    process.exit(130);
  };
  process.once('SIGINT', onInterrupt);
  let last = '';
  let task: MoveTask | undefined;
  try {
    for (;;) {
      task = await latestTask(sqs, sourceArn);
      if (!task) throw noTask(queue);
      const line = progress(task);
      if (!json && line !== last) out(tty ? `\r\x1b[2K${line}` : `${line}\n`);
      last = line;
      if (task.Status !== 'RUNNING' && task.Status !== 'CANCELLING') break;
      await new Promise((r) => setTimeout(r, WATCH_INTERVAL_MS));
    }
  } finally {
    process.off('SIGINT', onInterrupt);
  }
  if (tty) out('\n');
  if (task.Status === 'FAILED') process.exitCode = 1;
  const left =
    task.Status === 'COMPLETED' && task.ApproximateNumberOfMessagesToMove !== undefined
      ? task.ApproximateNumberOfMessagesToMove - task.ApproximateNumberOfMessagesMoved
      : 0;
  const reasons =
    left > 0 ? await leftBehind(sqs, dlqUrl, filter ?? task.Filter, task.DestinationArn !== undefined) : [];
  if (json) return printJson({ ...task, ...(left > 0 ? { LeftBehind: left, LeftBehindReasons: reasons } : {}) });
  if (left > 0) {
    out(`${plural(left, 'message')} left in ${queue}:\n`);
    for (const r of reasons) out(`  ${r.Count} ${r.Reason}\n`);
  }
}

export function watchCommand(dlq: Command): Command {
  return clientCommand(
    dlq,
    'watch <dlq>',
    'Follow the running (or latest) move task of a dead-letter queue until it ends',
    ['redrive dlq watch orders-dlq'],
    async ({ sqs, opts }, queue: string) => {
      const url = await sqs.queueUrl(queue, 'dead-letter queue');
      const arn = (await sqs.attributes(url, ['QueueArn'], 'dead-letter queue')).QueueArn!;
      const task = await latestTask(sqs, arn);
      if (!task)
        throw new CliError(`no move task on "${queue}" yet: start one with \`redrive dlq redrive ${queue}\``, {
          code: 'NoTask',
        });
      await watch(sqs, { queue, dlqUrl: url, sourceArn: arn, json: !!opts.json });
    },
  );
}

export function tasksCommand(dlq: Command): Command {
  return clientCommand(
    dlq,
    'tasks <dlq>',
    'List the recent move tasks of a dead-letter queue, newest first, with their filters',
    ['redrive dlq tasks orders-dlq', 'redrive dlq tasks orders-dlq --json'],
    async ({ sqs, opts }, queue: string) => {
      const arn = await sqs.queueArn(queue, 'dead-letter queue');
      const { Results = [] } = await sqs.call<{ Results?: MoveTask[] }>('ListMessageMoveTasks', {
        SourceArn: arn,
        MaxResults: 10,
      });
      // SQS hands out a handle only while a task runs; a finished task has neither field.
      if (opts.json)
        return printJson(Results.map((t) => (t.TaskHandle ? { TaskId: shortTaskId(t.TaskHandle), ...t } : t)));
      if (!Results.length) return out(`no move tasks on ${queue}\n`);
      out(table([TASK_HEADER, ...Results.map(taskLine)]));
    },
  );
}

export function cancelCommand(dlq: Command): Command {
  return clientCommand(
    dlq,
    'cancel <dlq-or-handle>',
    'Cancel the running move task of a dead-letter queue (or the task with this handle); messages already moved stay moved',
    ['redrive dlq cancel orders-dlq'],
    async ({ sqs, opts }, target: string) => {
      let handle = isHandle(target) ? target : undefined;
      if (!handle) {
        const task = await latestTask(sqs, await sqs.queueArn(target, 'dead-letter queue'));
        if (task?.Status !== 'RUNNING' || !task.TaskHandle) throw noTask(target);
        handle = task.TaskHandle;
      }
      const r = await sqs.call<{ ApproximateNumberOfMessagesMoved: number }>('CancelMessageMoveTask', {
        TaskHandle: handle,
      });
      if (opts.json) return printJson({ TaskId: shortTaskId(handle), ...r });
      out(
        `cancelled task ${shortTaskId(handle)}; ${plural(r.ApproximateNumberOfMessagesMoved, 'message')} had moved and stay moved\n`,
      );
    },
  );
}

/** A task handle is base64 of JSON with a taskId; a queue name never decodes to that. */
function isHandle(s: string): boolean {
  try {
    return typeof (JSON.parse(Buffer.from(s, 'base64').toString('utf8')) as { taskId?: unknown }).taskId === 'string';
  } catch {
    return false;
  }
}

function noTask(queue: string): CliError {
  return new CliError(`no running move task on "${queue}": see its tasks with \`redrive dlq tasks ${queue}\``, {
    code: 'NoRunningTask',
  });
}

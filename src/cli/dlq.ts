import { Command, Option } from 'commander';
import { peeked, progress, table, taskLine, type MoveTask, type PeekedMessage } from './dlq-format.js';
import { queueName, SqsJsonClient } from './sqs-client.js';
import { cyclesQueueName } from '../engine/dead-lettering.js';

const DEFAULT_ENDPOINT = 'http://127.0.0.1:9324';
const WATCH_INTERVAL_MS = 500;

const out = (s: string): void => {
  process.stdout.write(s);
};
const endpoint = () => new Option('--endpoint <url>', 'Redrive server').env('REDRIVE_ENDPOINT').default(DEFAULT_ENDPOINT);
const client = (opts: { endpoint: string }) => new SqsJsonClient(opts.endpoint);

/** `redrive dlq ...`: inspect dead-letter queues and redrive them, against a running server. */
export function dlqCommand(): Command {
  const dlq = new Command('dlq').description('Inspect and redrive dead-letter queues on a running server');

  dlq.command('list')
    .description('List the dead-letter queues with their depth and source queues')
    .addOption(endpoint())
    .option('--json', 'print JSON')
    .action(async (opts) => list(client(opts), opts.json));

  dlq.command('peek <queue>')
    .description('Show messages (oldest first) without receiving them: no receive count or visibility changes')
    .addOption(endpoint())
    .option('--limit <n>', 'at most this many messages', '10')
    .option('--from <token>', 'continue after a previous peek (its NextToken)')
    .option('--full', 'print whole bodies')
    .option('--json', 'print JSON')
    .action(async (queue, opts) => peek(client(opts), queue, opts));

  dlq.command('redrive <dlq>')
    .description('Move messages out of a dead-letter queue: back to their sources, or --to a queue')
    .addOption(endpoint())
    .option('--to <queue>', 'destination queue (default: each message back to the queue it died in)')
    .option('--rate <n>', 'at most n messages per second (1-500)')
    .option('--watch', 'show progress until the task ends')
    .option('--dry-run', 'only count the messages that would move')
    .option('--body-contains <text>', 'only messages whose body contains text')
    .option('--json-path <path>', 'only messages whose JSON body has this path (e.g. $.order.type)')
    .option('--equals <value>', 'with --json-path: only where the value equals this (JSON, or a string)')
    .option('--attribute <name=value>', 'only messages with this message attribute value')
    .option('--source <queue>', 'only messages that died in this queue')
    .option('--dead-lettered-after <time>', 'only messages dead-lettered at or after this ISO time')
    .option('--dead-lettered-before <time>', 'only messages dead-lettered before this ISO time')
    .action(async (queue, opts) => redrive(client(opts), queue, opts));

  dlq.command('tasks <dlq>')
    .description('List the recent move tasks of a dead-letter queue, newest first')
    .addOption(endpoint())
    .action(async (queue, opts) => tasks(client(opts), queue));

  dlq.command('cancel <task-handle>')
    .description('Cancel a running move task; messages already moved stay moved')
    .addOption(endpoint())
    .action(async (handle, opts) => {
      const r = await client(opts).call<{ ApproximateNumberOfMessagesMoved: number }>('CancelMessageMoveTask', { TaskHandle: handle });
      out(`cancelled; ${r.ApproximateNumberOfMessagesMoved} messages had moved\n`);
    });

  return dlq;
}

async function list(sqs: SqsJsonClient, json: boolean): Promise<void> {
  const rows: { queue: string; visible: number; inflight: number; sources: string[] }[] = [];
  for (const url of await sqs.allQueueUrls()) {
    const { queueUrls } = await sqs.call<{ queueUrls: string[] }>('ListDeadLetterSourceQueues', { QueueUrl: url });
    // The cycles queue has no source by RedrivePolicy, but holds dead letters all the same.
    const cycles = [cyclesQueueName(false), cyclesQueueName(true)].includes(queueName(url));
    if (!queueUrls.length && !cycles) continue;
    const a = await sqs.attributes(url, ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible']);
    rows.push({
      queue: queueName(url), visible: Number(a.ApproximateNumberOfMessages), inflight: Number(a.ApproximateNumberOfMessagesNotVisible),
      sources: cycles ? ['(broken dead-letter cycles)'] : queueUrls.map(queueName),
    });
  }
  if (json) return out(JSON.stringify(rows, null, 2) + '\n');
  if (!rows.length) return out('no dead-letter queues (no queue has a RedrivePolicy)\n');
  out(table([['DEAD-LETTER QUEUE', 'MESSAGES', 'IN FLIGHT', 'SOURCES'],
    ...rows.map((r) => [r.queue, String(r.visible), String(r.inflight), r.sources.join(', ')])]));
}

async function peek(sqs: SqsJsonClient, queue: string, opts: { limit: string; from?: string; full?: boolean; json?: boolean }) {
  const url = await sqs.queueUrl(queue);
  let left = positive(opts.limit, '--limit');
  let token = opts.from;
  const messages: PeekedMessage[] = [];
  do {
    const page = await sqs.call<{ Messages: PeekedMessage[]; NextToken?: string }>('PeekMessages', {
      QueueUrl: url, MaxResults: Math.min(left, 100), ...(token ? { NextToken: token } : {}),
    });
    messages.push(...page.Messages);
    left -= page.Messages.length;
    token = page.NextToken;
  } while (token && left > 0);
  if (opts.json) return out(JSON.stringify({ Messages: messages, NextToken: token }, null, 2) + '\n');
  if (!messages.length) out('no messages\n');
  for (const m of messages) out(peeked(m, !!opts.full));
  if (token) out(`more: --from ${token}\n`);
}

interface RedriveOptions {
  to?: string; rate?: string; watch?: boolean; dryRun?: boolean; bodyContains?: string; jsonPath?: string; equals?: string;
  attribute?: string; source?: string; deadLetteredAfter?: string; deadLetteredBefore?: string;
}

async function redrive(sqs: SqsJsonClient, queue: string, opts: RedriveOptions) {
  const sourceArn = await sqs.queueArn(queue);
  const input: Record<string, unknown> = { SourceArn: sourceArn };
  if (opts.to) input.DestinationArn = await sqs.queueArn(opts.to);
  if (opts.rate) input.MaxNumberOfMessagesPerSecond = positive(opts.rate, '--rate');
  const filter = await filterOf(sqs, opts);
  if (filter) input.Filter = filter;
  if (opts.dryRun) {
    const r = await sqs.call<{ ApproximateNumberOfMessagesToMove: number }>('StartMessageMoveTask', { ...input, DryRun: true });
    return out(`${r.ApproximateNumberOfMessagesToMove} messages would move\n`);
  }
  const { TaskHandle } = await sqs.call<{ TaskHandle: string }>('StartMessageMoveTask', input);
  out(`started task ${TaskHandle}\n`);
  if (opts.watch) await watch(sqs, sourceArn);
}

async function filterOf(sqs: SqsJsonClient, o: RedriveOptions): Promise<Record<string, unknown> | undefined> {
  const f: Record<string, unknown> = {};
  if (o.bodyContains !== undefined) f.BodyContains = o.bodyContains;
  if (o.jsonPath !== undefined) f.BodyJsonPath = o.jsonPath;
  if (o.equals !== undefined) f.Equals = jsonOrString(o.equals);
  if (o.attribute !== undefined) {
    const eq = o.attribute.indexOf('=');
    if (eq <= 0) throw new Error('--attribute takes name=value');
    f.MessageAttribute = { Name: o.attribute.slice(0, eq), Value: o.attribute.slice(eq + 1) };
  }
  if (o.source !== undefined) f.DeadLetterQueueSourceArn = await sqs.queueArn(o.source);
  if (o.deadLetteredAfter !== undefined) f.DeadLetteredAfter = epochMs(o.deadLetteredAfter, '--dead-lettered-after');
  if (o.deadLetteredBefore !== undefined) f.DeadLetteredBefore = epochMs(o.deadLetteredBefore, '--dead-lettered-before');
  return Object.keys(f).length ? f : undefined;
}

/** Prints the task's progress until it ends; a failed task makes the command fail. */
async function watch(sqs: SqsJsonClient, sourceArn: string): Promise<void> {
  const tty = process.stdout.isTTY;
  let last = '';
  for (;;) {
    const { Results } = await sqs.call<{ Results?: MoveTask[] }>('ListMessageMoveTasks', { SourceArn: sourceArn });
    const task = Results?.[0];
    if (!task) throw new Error('the task is no longer listed');
    const line = progress(task);
    if (line !== last) out(tty ? `\r\x1b[2K${line}` : `${line}\n`);
    last = line;
    if (task.Status !== 'RUNNING' && task.Status !== 'CANCELLING') {
      if (tty) out('\n');
      if (task.Status === 'FAILED') process.exitCode = 1;
      return;
    }
    await new Promise((r) => setTimeout(r, WATCH_INTERVAL_MS));
  }
}

async function tasks(sqs: SqsJsonClient, queue: string) {
  const { Results = [] } = await sqs.call<{ Results?: MoveTask[] }>('ListMessageMoveTasks', { SourceArn: await sqs.queueArn(queue), MaxResults: 10 });
  if (!Results.length) return out('no move tasks\n');
  out(table([['STARTED', 'STATUS', 'MOVED', 'DESTINATION', 'HANDLE / REASON'], ...Results.map(taskLine)]));
}

function positive(v: string, flag: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${flag} takes a positive integer`);
  return n;
}

function epochMs(v: string, flag: string): number {
  const t = Date.parse(v);
  if (Number.isNaN(t)) throw new Error(`${flag} takes an ISO time, e.g. 2026-01-31T12:00:00Z`);
  return t;
}

function jsonOrString(v: string): unknown {
  try {
    return JSON.parse(v);
  } catch {
    return v;
  }
}

import type { Command } from 'commander';
import { buffer } from 'node:stream/consumers';
import { CliError } from './cli-error.js';
import { clientCommand, group, out, printJson } from './command-kit.js';
import { plural } from './dlq-format.js';
import { collect, pair, seconds } from './flags.js';
import { exportQueue, importQueue } from './message-io.js';
import { peekCommand } from './peek.js';
import { messageActionCommands } from './message-actions.js';

interface SendOptions {
  attribute?: string[];
  group?: string;
  dedup?: string;
  delay?: string;
}

/** `redrive messages ...`: send, look at, delete, export and import messages. */
export function messagesCommand(): Command {
  const messages = group(
    'messages',
    'Messages: send, peek, delete, make visible and move (by id), export, import (JSON lines), release-amqp',
    [
      'redrive messages send orders \'{"id":1}\'',
      'redrive messages peek orders',
      'redrive messages export orders-dlq --out dlq.jsonl',
    ],
  );
  clientCommand<SendOptions>(
    messages,
    'send <queue> [body]',
    'Send a message (the body from the argument, or from stdin without one)',
    [
      'redrive messages send orders \'{"id":1}\' --attribute type=order',
      'echo hello | redrive messages send orders',
      'redrive messages send events.fifo \'{"id":2}\' --group customer-7 --dedup order-2',
    ],
    async ({ sqs, opts }, queue: string, body: string | undefined) => {
      const MessageBody = body ?? (process.stdin.isTTY ? '' : (await stdinText()).replace(/\n$/, ''));
      if (MessageBody === '')
        throw new CliError(
          'no message body: give it after the queue name, or on stdin (usage: redrive messages send <queue> [body])',
          { code: 'MissingBody' },
        );
      const input: Record<string, unknown> = { QueueUrl: await sqs.queueUrl(queue), MessageBody };
      if (opts.attribute?.length) {
        input.MessageAttributes = Object.fromEntries(
          opts.attribute
            .map((a) => pair(a, '--attribute'))
            .map(([n, v]) => [n, { DataType: 'String', StringValue: v }]),
        );
      }
      if (opts.group !== undefined) input.MessageGroupId = opts.group;
      if (opts.dedup !== undefined) input.MessageDeduplicationId = opts.dedup;
      if (opts.delay !== undefined) input.DelaySeconds = seconds(opts.delay, '--delay', 900);
      const r = await sqs.call<{ MessageId: string }>('SendMessage', input);
      if (opts.json) return printJson(r);
      out(`${r.MessageId}\n`);
    },
  )
    .option('--attribute <name=value>', 'a String message attribute (repeatable)', collect)
    .option('--group <id>', 'FIFO: the message group id')
    .option('--dedup <id>', 'FIFO: the deduplication id (not needed with ContentBasedDeduplication)')
    .option('--delay <seconds>', 'standard queues: seconds before the message is visible (0-900)');

  peekCommand(messages, 'messages', 'queue');

  clientCommand(
    messages,
    'delete <queue> <message-id...>',
    'Delete messages by id, whatever their state (no receipt handle needed)',
    ['redrive messages delete orders-dlq 6f1c2a4e-0000-4000-8000-000000000000'],
    async ({ sqs, opts }, queue: string, ids: string[]) => {
      const url = await sqs.queueUrl(queue);
      const deleted: string[] = [];
      const failed: { Id: string; Code: string; Message: string }[] = [];
      for (let i = 0; i < ids.length; i += 10) {
        const r = await sqs.call<{
          Successful?: { Id: string }[];
          Failed?: { Id: string; Code: string; Message: string }[];
        }>('DeleteMessagesById', {
          QueueUrl: url,
          MessageIds: ids.slice(i, i + 10),
        });
        deleted.push(...(r.Successful ?? []).map((s) => s.Id));
        failed.push(...(r.Failed ?? []));
      }
      if (failed.length) process.exitCode = 1;
      if (opts.json) return printJson({ Deleted: deleted, Failed: failed });
      for (const id of deleted) out(`deleted ${id}\n`);
      for (const f of failed)
        process.stderr.write(
          `redrive: message ${f.Id} is not in ${queue} (deleted, received and deleted, redriven or expired)\n`,
        );
    },
  );

  messageActionCommands(messages);

  clientCommand<{ out: string }>(
    messages,
    'export <queue>',
    'Write every message of a queue as JSON lines, without receiving them: body, attributes, FIFO ids and death history',
    ['redrive messages export orders-dlq --out orders-dlq.jsonl', 'redrive messages export orders-dlq | jq -r .Body'],
    async ({ sqs, opts }, queue: string) => {
      const url = await sqs.queueUrl(queue);
      const n = await exportQueue(sqs, url, opts.out);
      if (opts.out !== '-')
        opts.json
          ? printJson({ Exported: n, File: opts.out })
          : out(`exported ${plural(n, 'message')} from ${queue} to ${opts.out}\n`);
    },
  ).option('--out <file>', 'the file to write (- for stdout)', '-');

  clientCommand<{ in: string }>(
    messages,
    'import <queue>',
    'Send the messages of a JSON lines export to a queue, keeping attributes, FIFO ids and death history',
    [
      'redrive messages import orders-replay --in orders-dlq.jsonl',
      'cat orders-dlq.jsonl | redrive messages import orders-replay',
    ],
    async ({ sqs, opts }, queue: string) => {
      const url = await sqs.queueUrl(queue);
      const fifo = (await sqs.attributes(url, ['FifoQueue'])).FifoQueue === 'true';
      const r = await importQueue(sqs, url, fifo, opts.in, queue);
      if (r.failed.length) process.exitCode = 1;
      if (opts.json) return printJson({ Imported: r.sent, Failed: r.failed });
      out(`imported ${plural(r.sent, 'message')} into ${queue}\n`);
      for (const f of r.failed)
        process.stderr.write(`redrive: line ${f.line} not imported: ${f.message} (${f.code})\n`);
    },
  ).option('--in <file>', 'the file to read (- for stdin)', '-');

  clientCommand(
    messages,
    'release-amqp [holder]',
    'Return the unacknowledged AMQP deliveries of stopped server processes to their queues now (ReleaseAmqpDeliveries)',
    ['redrive messages release-amqp', 'redrive messages release-amqp 3f2a9c0d1e4b5a69'],
    async ({ sqs, opts }, holder: string | undefined) => {
      const r = await sqs.call<{ Released: number; Self: string; Holders: { Holder: string; Alive: boolean }[] }>(
        'ReleaseAmqpDeliveries',
        holder ? { Holder: holder } : {},
      );
      if (opts.json) return printJson(r);
      for (const h of r.Holders) out(`process ${h.Holder}: ${h.Alive ? 'running' : 'stopped'}\n`);
      out(`released ${r.Released} ${r.Released === 1 ? 'delivery' : 'deliveries'} (this server is ${r.Self})\n`);
    },
  );
  return messages;
}

/** The body from stdin, as sent or refused: a lenient decoder would send U+FFFD in place of bytes that are not UTF-8. */
async function stdinText(): Promise<string> {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(await buffer(process.stdin));
  } catch {
    throw new CliError(
      'the body on stdin is not UTF-8 text, which is all SQS carries: send binary data base64-encoded',
      { code: 'InvalidBody' },
    );
  }
}

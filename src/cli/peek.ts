import type { Command } from 'commander';
import { clientCommand, out, printJson } from './command-kit.js';
import type { PeekedMessage } from '../wire/messages.js';
import { peeked } from './dlq-format.js';
import { positive } from './flags.js';
import type { SqsJsonClient } from './sqs-client.js';
import { filterOf, withFilterFlags, type FilterOptions } from './filter-flags.js';

export interface PeekOptions extends FilterOptions {
  limit: string;
  count?: boolean;
  json?: boolean;
  from?: string;
  full?: boolean;
}

/** Pages of PeekMessages until `limit` messages (or the end); the filter is applied by the server. */
export async function peekPages(sqs: SqsJsonClient, url: string, limit: number, from?: string, filter?: object) {
  let left = limit;
  let token = from;
  const messages: PeekedMessage[] = [];
  do {
    const page = await sqs.call<{ Messages: PeekedMessage[]; NextToken?: string }>('PeekMessages', {
      QueueUrl: url,
      MaxResults: Math.min(left, 100),
      ...(token ? { NextToken: token } : {}),
      ...(filter ? { Filter: filter } : {}),
    });
    messages.push(...page.Messages);
    left -= page.Messages.length;
    token = page.NextToken;
  } while (token && left > 0);
  return { messages, next: token };
}

/** `peek <queue>`, in the `messages` and `dlq` groups alike. */
export function peekCommand(parent: Command, group: string, role: string): Command {
  return withFilterFlags(
    clientCommand<PeekOptions>(
      parent,
      'peek <queue>',
      'Show messages, oldest first, without receiving them: no receive count or visibility changes',
      [
        `redrive ${group} peek orders-dlq`,
        `redrive ${group} peek orders-dlq --limit 50 --full`,
        `redrive ${group} peek orders-dlq --death-reason rejected --source orders`,
        `redrive ${group} peek orders-dlq --from <token from the previous peek>`,
      ],
      async ({ sqs, opts }, queue: string) => {
        const filter = await filterOf(sqs, opts);
        const url = await sqs.queueUrl(queue, role);
        if (opts.count) return countCommand(sqs, url, queue, opts, filter);
        const { messages, next } = await peekPages(sqs, url, positive(opts.limit, '--limit'), opts.from, filter);
        if (opts.json) return printJson({ Messages: messages, NextToken: next });
        if (!messages.length) out(`no messages${filter ? ' that match' : ''} in ${queue}\n`);
        for (const m of messages) out(peeked(m, !!opts.full));
        if (next)
          out(`more: redrive ${group} peek ${queue} --from ${next}${filter ? ' (and the same filter flags)' : ''}\n`);
      },
    )
      .option('--limit <n>', 'at most this many messages', '10')
      .option('--from <token>', 'continue after a previous peek (its NextToken)')
      .option('--full', 'print whole bodies')
      .option(
        '--count',
        `count the messages that match instead (at most ${COUNT_REQUESTS * 1000} examined; the server examines 1,000 a request)`,
      ),
  );
}

/** Requests `--count` makes at most, each examining at most 1,000 messages on the server. */
const COUNT_REQUESTS = 10;

async function countCommand(sqs: SqsJsonClient, url: string, queue: string, opts: PeekOptions, filter?: object) {
  let count = 0;
  let examined = 0;
  let token = opts.from;
  for (let i = 0; i < COUNT_REQUESTS; i++) {
    const r = await sqs.call<{ Count: number; Examined: number; NextToken?: string }>('PeekMessages', {
      QueueUrl: url,
      CountOnly: true,
      ...(token ? { NextToken: token } : {}),
      ...(filter ? { Filter: filter } : {}),
    });
    count += r.Count;
    examined += r.Examined;
    token = r.NextToken;
    if (!token) break;
  }
  if (opts.json) return printJson({ Count: count, Examined: examined, Exact: !token, NextToken: token });
  const what = filter ? 'match' : 'are';
  if (!token) return out(`${count} messages ${what} in ${queue}\n`);
  out(`at least ${count} messages ${what} in ${queue} (the first ${examined} examined)\nmore: add --from ${token}\n`);
}

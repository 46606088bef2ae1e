import type { Command } from 'commander';
import { clientCommand, group, out, printJson } from './command-kit.js';
import { name } from '../wire/move-tasks.js';
import { age, table } from './dlq-format.js';
import { CliError } from './cli-error.js';
import { collect, pair, positive } from './flags.js';
import { allSummaries } from './summaries.js';
import { activityTotals, type ActivityMinute } from '../wire/activity.js';
import type { SqsJsonClient } from './sqs-client.js';

interface CreateOptions {
  attribute?: string[];
  tag?: string[];
  dlq?: string;
  maxReceives?: string;
}

/** `redrive queues ...`: the life of a queue, from create to delete. */
export function queuesCommand(): Command {
  const queues = group('queues', 'Queues: list, create, show, activity, set (attributes), purge, delete', [
    'redrive queues list',
    'redrive queues create orders --dlq orders-dlq --max-receives 5',
    'redrive queues show orders',
  ]);
  clientCommand<{ prefix?: string }>(
    queues,
    'list',
    'List the queues of the account with their message counts',
    ['redrive queues list', 'redrive queues list --prefix orders', 'redrive queues list --json'],
    async ({ sqs, opts }) => {
      const all = await allSummaries(sqs, opts.prefix);
      if (opts.json) return printJson(all);
      if (!all.length) {
        const region = await sqs.signedRegion();
        return out(`no queues${opts.prefix ? ` starting with ${opts.prefix}` : ''}${region ? ` in ${region}` : ''}\n`);
      }
      out(
        table([
          ['QUEUE', 'MESSAGES', 'IN FLIGHT', 'DELAYED', 'OLDEST', 'DEAD-LETTER QUEUE'],
          ...all.map((q) => [
            q.QueueName,
            String(q.ApproximateNumberOfMessages),
            String(q.ApproximateNumberOfMessagesNotVisible),
            String(q.ApproximateNumberOfMessagesDelayed),
            age(q.ApproximateAgeOfOldestMessage),
            q.RedrivePolicy
              ? name((JSON.parse(q.RedrivePolicy) as { deadLetterTargetArn: string }).deadLetterTargetArn)
              : '-',
          ]),
        ]),
      );
    },
  ).option('--prefix <text>', 'only queues whose name starts with this');

  clientCommand<CreateOptions>(
    queues,
    'create <queue>',
    'Create a queue (a name ending in .fifo makes a FIFO queue); creating one that exists with the same attributes is fine',
    [
      'redrive queues create orders-dlq',
      'redrive queues create orders --dlq orders-dlq --max-receives 5 --attribute VisibilityTimeout=60',
      'redrive queues create events.fifo --attribute ContentBasedDeduplication=true --tag team=shop',
    ],
    async ({ sqs, opts }, queue: string) => {
      const attributes = Object.fromEntries((opts.attribute ?? []).map((a) => pair(a, '--attribute')));
      if (queue.endsWith('.fifo')) attributes.FifoQueue ??= 'true';
      // Alone it would create a queue without the redrive policy the user asked for.
      if (opts.maxReceives !== undefined && !opts.dlq) {
        throw new CliError(
          '--max-receives needs --dlq <queue>: the dead-letter queue a message goes to after that many receives',
          { code: 'InvalidFlag' },
        );
      }
      if (opts.dlq) {
        const deadLetterTargetArn = await sqs.queueArn(opts.dlq, '--dlq');
        attributes.RedrivePolicy = JSON.stringify({
          deadLetterTargetArn,
          maxReceiveCount: positive(opts.maxReceives ?? '5', '--max-receives'),
        });
      }
      const tags = Object.fromEntries((opts.tag ?? []).map((t) => pair(t, '--tag')));
      const r = await sqs.call<{ QueueUrl: string }>('CreateQueue', {
        QueueName: queue,
        ...(Object.keys(attributes).length ? { Attributes: attributes } : {}),
        ...(Object.keys(tags).length ? { tags } : {}),
      });
      if (opts.json) return printJson(r);
      out(`${r.QueueUrl}\n`);
    },
  )
    .option('--attribute <name=value>', 'a queue attribute (repeatable), e.g. VisibilityTimeout=60', collect)
    .option('--tag <key=value>', 'a tag (repeatable)', collect)
    .option('--dlq <queue>', 'dead-letter queue for messages received too often (sets RedrivePolicy)')
    .option('--max-receives <n>', 'with --dlq: receives before a message is dead-lettered (default: 5)');

  clientCommand(
    queues,
    'show <queue>',
    'Show a queue: its URL, every attribute, its tags and the queues that dead-letter into it',
    ['redrive queues show orders', 'redrive queues show orders --json'],
    async ({ sqs, opts }, queue: string) => {
      const url = await sqs.queueUrl(queue);
      const attributes = await sqs.attributes(url, ['All']);
      const { Tags = {} } = await sqs.call<{ Tags?: Record<string, string> }>('ListQueueTags', { QueueUrl: url });
      const sources = await deadLetterSources(sqs, url);
      if (opts.json)
        return printJson({ QueueUrl: url, Attributes: attributes, Tags, DeadLetterSourceQueueUrls: sources });
      const rows = [
        ['URL', url],
        ...Object.entries(attributes).sort(([a], [b]) => a.localeCompare(b)),
        ...Object.entries(Tags).map(([k, v]) => [`tag ${k}`, v]),
      ];
      if (sources.length) rows.push(['dead-letter queue of', sources.map(name).join(', ')]);
      out(table(rows));
    },
  );

  clientCommand(
    queues,
    'activity <queue>',
    'What the last hour counted: sent, received, deleted, dead-lettered, dead-letter arrivals (as the console and /metrics count them)',
    ['redrive queues activity orders', 'redrive queues activity orders-dlq --json'],
    async ({ sqs, opts }, queue: string) => {
      const r = await sqs.call<{ Minutes: ActivityMinute[] }>('GetQueueActivity', {
        QueueUrl: await sqs.queueUrl(queue),
      });
      if (opts.json) return printJson(r);
      out(`${queue}, last hour: ${activityTotals(r.Minutes)}\n`);
    },
  );

  clientCommand(
    queues,
    'set <queue> <name=value...>',
    'Change queue attributes; an empty value removes an extension attribute',
    [
      'redrive queues set orders VisibilityTimeout=120',
      'redrive queues set orders-dlq MessageRetentionPeriod=1209600 RedriveMaxLength=100000',
    ],
    async ({ sqs, opts }, queue: string, pairs: string[]) => {
      const url = await sqs.queueUrl(queue);
      const attributes = Object.fromEntries(pairs.map((p) => pair(p, 'attribute')));
      await sqs.call('SetQueueAttributes', { QueueUrl: url, Attributes: attributes });
      if (opts.json) return printJson({ QueueUrl: url, Attributes: attributes });
      out(`set ${Object.keys(attributes).join(', ')} on ${queue}\n`);
    },
  );

  // Purge and delete: one call on the queue, and a line saying it was done.
  for (const [verb, action, description, example] of [
    [
      'purge',
      'PurgeQueue',
      'Delete every message of a queue (SQS allows one purge a minute per queue)',
      'redrive queues purge orders-dlq',
    ],
    ['delete', 'DeleteQueue', 'Delete a queue and its messages', 'redrive queues delete orders-old'],
  ] as const) {
    clientCommand(queues, `${verb} <queue>`, description, [example], async ({ sqs, opts }, queue: string) => {
      const url = await sqs.queueUrl(queue);
      await sqs.call(action, { QueueUrl: url });
      if (opts.json) return printJson({ QueueUrl: url, [verb === 'purge' ? 'Purged' : 'Deleted']: true });
      out(`${verb === 'purge' ? 'purged' : 'deleted'} ${queue}\n`);
    });
  }
  return queues;
}

async function deadLetterSources(sqs: SqsJsonClient, url: string): Promise<string[]> {
  const urls: string[] = [];
  let token: string | undefined;
  do {
    const page = await sqs.call<{ queueUrls?: string[]; NextToken?: string }>('ListDeadLetterSourceQueues', {
      QueueUrl: url,
      MaxResults: 1000,
      ...(token ? { NextToken: token } : {}),
    });
    urls.push(...(page.queueUrls ?? []));
    token = page.NextToken;
  } while (token);
  return urls;
}

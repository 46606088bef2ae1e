import { DEATH_REASONS, isDeathReason } from '../wire/deaths.js';
import type { Command } from 'commander';
import { CliError } from './cli-error.js';
import { epochMs, jsonOrString, pair } from './flags.js';
import type { SqsJsonClient } from './sqs-client.js';

/** The selective-redrive filter as flags, for `dlq redrive` and `peek` alike (the API's Filter, docs/extensions.md). */
export interface FilterOptions {
  bodyContains?: string;
  jsonPath?: string;
  equals?: string;
  attribute?: string;
  source?: string;
  deadLetteredAfter?: string;
  deadLetteredBefore?: string;
  deathReason?: string;
}

export function withFilterFlags(cmd: Command): Command {
  return cmd
    .option('--body-contains <text>', 'only messages whose body contains text')
    .option('--json-path <path>', 'only messages whose JSON body has this path (e.g. $.order.type)')
    .option('--equals <value>', 'with --json-path: only where the value equals this (JSON, or a string)')
    .option('--attribute <name=value>', 'only messages with this message attribute value')
    .option('--source <queue>', 'only messages that died in this queue')
    .option(
      '--death-reason <reason>',
      `only messages whose latest death was for this reason: ${DEATH_REASONS.join(', ')}`,
    )
    .option('--dead-lettered-after <time>', 'only messages dead-lettered at or after this ISO time')
    .option('--dead-lettered-before <time>', 'only messages dead-lettered before this ISO time');
}

/** The API's Filter from the flags, checked here so that errors name the flags. */
export async function filterOf(sqs: SqsJsonClient, o: FilterOptions): Promise<Record<string, unknown> | undefined> {
  const f: Record<string, unknown> = {};
  if (o.equals !== undefined && o.jsonPath === undefined) {
    throw new CliError(
      "--equals needs --json-path: it compares the value at that path, e.g. --json-path '$.type' --equals order",
      { code: 'InvalidFlag' },
    );
  }
  if (o.bodyContains !== undefined) f.BodyContains = o.bodyContains;
  if (o.jsonPath !== undefined) f.BodyJsonPath = o.jsonPath;
  if (o.equals !== undefined) f.Equals = jsonOrString(o.equals);
  if (o.attribute !== undefined) {
    const [n, v] = pair(o.attribute, '--attribute');
    f.MessageAttribute = { Name: n, Value: v };
  }
  if (o.deathReason !== undefined) {
    if (!isDeathReason(o.deathReason)) {
      throw new CliError(
        `--death-reason ${JSON.stringify(o.deathReason)}: give ${DEATH_REASONS.slice(0, -1).join(', ')} or ${DEATH_REASONS.at(-1)}`,
        { code: 'InvalidFlag' },
      );
    }
    f.DeathReason = o.deathReason;
  }
  if (o.deadLetteredAfter !== undefined) f.DeadLetteredAfter = epochMs(o.deadLetteredAfter, '--dead-lettered-after');
  if (o.deadLetteredBefore !== undefined)
    f.DeadLetteredBefore = epochMs(o.deadLetteredBefore, '--dead-lettered-before');
  if (o.source !== undefined) f.DeadLetterQueueSourceArn = await sqs.queueArn(o.source, '--source');
  return Object.keys(f).length ? f : undefined;
}

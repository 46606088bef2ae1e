import { Command, Option } from 'commander';
import { reportError } from './cli-error.js';
import { SqsJsonClient } from './sqs-client.js';

/** What every client command shares: where the server is, who calls it, how to print. */
const DEFAULT_ENDPOINT = 'http://127.0.0.1:9324';

export interface CommonOptions {
  endpoint: string;
  profile?: string;
  region?: string;
  json?: boolean;
  verbose?: boolean;
}

export interface Context<O> {
  sqs: SqsJsonClient;
  opts: O & CommonOptions;
}

export const out = (s: string): void => {
  process.stdout.write(s);
};
export const printJson = (v: unknown): void => out(`${JSON.stringify(v, null, 2)}\n`);

/**
 * A client command: the shared flags, examples under --help, and an action that gets a
 * client and reports errors as a person (or, with --json, a script) reads them.
 */
export function clientCommand<O>(
  parent: Command,
  usage: string,
  description: string,
  examples: string[],
  // Commander's positional arguments: strings, or arrays for variadic ones.
  // biome-ignore lint/suspicious/noExplicitAny: each command's own action declares its arguments' types.
  run: (ctx: Context<O>, ...args: any[]) => Promise<void>,
): Command {
  const cmd = parent
    .command(usage)
    .description(description)
    .addOption(new Option('--endpoint <url>', 'the Redrive server').env('REDRIVE_ENDPOINT').default(DEFAULT_ENDPOINT))
    .option(
      '--profile <name>',
      'credentials and region from this profile of ~/.aws/credentials and ~/.aws/config (or AWS_PROFILE)',
    )
    .option('--region <region>', "region to sign requests for (or AWS_REGION; default: the profile's, else us-east-1)")
    .option('--json', 'print JSON (errors too, on stderr)')
    .option('--verbose', 'on errors, also print the API action and error code');
  if (examples.length) cmd.addHelpText('after', examplesText(examples));
  cmd.action(async (...args: unknown[]) => {
    const self = args.at(-1) as Command;
    const opts = self.opts<O & CommonOptions>();
    const positional = args.slice(0, -2);
    try {
      await run(
        { sqs: new SqsJsonClient(opts.endpoint, { profile: opts.profile, region: opts.region }), opts },
        ...positional,
      );
    } catch (e) {
      reportError(e, opts);
    }
  });
  return cmd;
}

/** A command group (`queues`, `messages`, `dlq`) whose --help lists its commands with examples. */
export function group(name: string, description: string, examples: string[]): Command {
  const g = new Command(name).description(description);
  g.addHelpText('after', examplesText(examples));
  return g;
}

const examplesText = (examples: string[]) => `\nExamples:\n${examples.map((e) => `  $ ${e}`).join('\n')}\n`;

#!/usr/bin/env node
import { Command, Option } from 'commander';
import { defaults, startServer } from '../server/app.js';
import { dlqCommand } from './dlq.js';

const program = new Command('redrive').description('An SQS-compatible message queue with dead-letter queues you can trust.');

program
  .command('serve')
  .description('Run the Redrive server')
  .option('--host <host>', 'address to listen on', defaults.host)
  .option('--port <port>', 'port to listen on (0 picks a free one)', String(defaults.port))
  .option('--storage <kind>', 'sqlite | memory', defaults.storage)
  .option('--data-dir <dir>', 'where the SQLite database lives', defaults.dataDir)
  .addOption(new Option('--durability <mode>', 'process: survives a crash of the server; power: also power loss (fsync)')
    .choices(['process', 'power']).default(defaults.durability))
  .option('--region <region>', 'region in queue ARNs', defaults.region)
  .option('--account-id <id>', 'account id in queue URLs and ARNs', defaults.accountId)
  .addOption(new Option('--log-level <level>', 'log level').choices(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default(defaults.logLevel))
  .addOption(new Option('--clock <clock>', 'manual: time moves only via POST /_redrive/clock (tests only)').choices(['system', 'manual']).default('system').hideHelp())
  .action(async (opts) => {
    const server = await startServer({ ...defaults, ...opts, port: Number(opts.port) });
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      process.once(signal, () => {
        server.stop().then(
          () => process.exit(0),
          (err) => {
            server.log.error({ err }, 'shutdown failed');
            process.exit(1);
          },
        );
      });
    }
  });

program.addCommand(dlqCommand());

program.parseAsync().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});

#!/usr/bin/env node
import { Command } from 'commander';
import { backupCommand } from './backup.js';
import { dlqCommand } from './dlq.js';
import { messagesCommand } from './messages.js';
import { queuesCommand } from './queues.js';
import { serveCommand } from './serve.js';
import { version } from './version.js';

const program = new Command('redrive')
  .description('An SQS-compatible message queue with dead-letter queues you can trust.')
  .version(version(), '-V, --version', 'print the version')
  .addHelpText(
    'after',
    `
Client commands talk to a running server (--endpoint, default http://127.0.0.1:9324, or REDRIVE_ENDPOINT) and sign
their requests with AWS credentials when they find some (AWS_* variables, --profile, ~/.aws files).

Examples:
  $ redrive serve --data-dir ./data
  $ redrive queues create orders-dlq
  $ redrive queues create orders --dlq orders-dlq --max-receives 3
  $ redrive dlq list
  $ redrive dlq redrive orders-dlq --watch
  $ AWS_PROFILE=team-a redrive queues list --endpoint http://queues.internal:9324
`,
  );

program.addCommand(serveCommand());
program.addCommand(queuesCommand());
program.addCommand(messagesCommand());
program.addCommand(dlqCommand());
program.addCommand(backupCommand());
program
  .command('version')
  .description('Print the version')
  .action(() => {
    process.stdout.write(`${version()}\n`);
  });

// A reader that stops reading (`redrive queues list | head -2`) is not the command's failure:
// every command but `serve` (which keeps serving, shutdown.ts) exits at once and quietly, as
// `ls | head` does, instead of crashing on EPIPE.
program.hook('preAction', (_program, command) => {
  if (command.name() === 'serve') return;
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    process.exit(0);
  });
});

program.parseAsync().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});

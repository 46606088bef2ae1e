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
  .option('--storage <kind>', 'sqlite | memory | postgres://user@host:port/db[?pool_size=N] (shared by several nodes)', defaults.storage)
  .option('--data-dir <dir>', 'where the SQLite database lives', defaults.dataDir)
  .addOption(new Option('--durability <mode>', 'process: survives a crash of the server; power: also power loss (fsync)')
    .choices(['process', 'power']).default(defaults.durability))
  .option('--region <region>', 'region in queue ARNs', defaults.region)
  .option('--account-id <id>', 'account id in queue URLs and ARNs', defaults.accountId)
  .option('--config <file>', 'config file, JSON or YAML (.yaml, .yml): dead-letter policies and queues to create (SIGHUP reloads them), and storage')
  .option('--credentials <file>', 'JSON file of access keys ({"<key id>": {"secretAccessKey", "accountId"}}): turns on SigV4 signature checking')
  .option('--node-id <id>', 'this node\'s name in the node label of its metrics (default: host name and port)')
  .option('--metrics-address <host:port>', 'serve /metrics on this address instead of the main port')
  .option('--metrics-token-file <file>', 'a file holding the bearer token /metrics requires (needed for /metrics on the main port with --credentials)')
  .option('--amqp-port <port>', 'serve AMQP 0-9-1 on this port too (off by default; 0 picks a free one)')
  .addOption(new Option('--console <state>', 'the web console under /console').choices(['on', 'off']).default(defaults.console))
  .addOption(new Option('--log-level <level>', 'log level').choices(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default(defaults.logLevel))
  .option('--shutdown-grace <seconds>', 'on SIGTERM, answer 503 on /ready for this long while still serving, then drain (give load balancers time to notice)', '0')
  .addOption(new Option('--clock <clock>', 'manual: time moves only via POST /_redrive/clock (tests only)').choices(['system', 'manual']).default('system').hideHelp())
  .action(async (opts, cmd: Command) => {
    const server = await startServer({
      ...defaults, ...opts, port: Number(opts.port), configFile: opts.config,
      shutdownGraceMs: seconds(opts.shutdownGrace, '--shutdown-grace') * 1000,
      amqpPort: opts.amqpPort === undefined ? undefined : Number(opts.amqpPort),
      storageFromFlag: cmd.getOptionValueSource('storage') === 'cli',
    });
    // Policies change without a restart: edit the file, then `kill -HUP <pid>`. A file
    // that does not validate is logged and ignored; the policies in force stay.
    process.on('SIGHUP', () => {
      server.reload().catch((err: Error) => server.log.error({ err: err.message }, 'config reload failed; policies unchanged'));
    });
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

function seconds(value: string, flag: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0) throw new Error(`${flag} must be a number of seconds, 0 or more, not "${value}"`);
  return n;
}

program.parseAsync().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});

import { Command, Option } from 'commander';
import type { RunningServer } from '../server/app.js';
import { defaults, serverLog } from '../server/server-config.js';
import { checkThreads, MAX_THREADS, parsePort, StartupError } from '../server/start-up.js';
import { SqliteUnavailableError } from '../stores/sqlite/driver.js';
import { parseTrustProxy } from '../server/client-address.js';
import { addAmqpFlags, amqpLimitsFrom } from './amqp-flags.js';
import { addQuotaFlags, quotasFrom } from './quota-flags.js';

/** `redrive serve`: the server itself. */
export function serveCommand(): Command {
  const command = new Command('serve')
    .description('Run the Redrive server')
    .option('--host <host>', 'address to listen on', defaults.host)
    .option('--port <port>', 'port to listen on (0 picks a free one)', String(defaults.port))
    .option(
      '--storage <kind>',
      'sqlite | memory | postgres://user@host:port/db[?pool_size=N] (shared by several nodes)',
      defaults.storage,
    )
    .option('--data-dir <dir>', 'where the SQLite database lives', defaults.dataDir)
    .addOption(
      new Option('--durability <mode>', 'process: survives a crash of the server; power: also power loss (fsync)')
        .choices(['process', 'power'])
        .default(defaults.durability),
    )
    .option('--region <region>', 'region in queue ARNs', defaults.region)
    .option('--account-id <id>', 'account id in queue URLs and ARNs', defaults.accountId)
    .option(
      '--config <file>',
      'config file, JSON or YAML (.yaml, .yml): dead-letter policies and queues to create (SIGHUP reloads them), and storage',
    )
    .option(
      '--credentials <file>',
      'JSON file of access keys ({"<key id>": {"secretAccessKey", "accountId"}}): turns on SigV4 signature checking',
    )
    .option(
      '--trust-proxy <addresses>',
      'reverse proxies (comma-separated addresses or CIDR ranges) whose X-Forwarded-For names the client; without it X-Forwarded-For is ignored',
    )
    .option('--node-id <id>', "this node's name in the node label of its metrics (default: host name and port)")
    .option('--metrics-address <host:port>', 'serve /metrics on this address instead of the main port')
    .option(
      '--metrics-token-file <file>',
      'a file holding the bearer token /metrics requires (needed for /metrics on the main port with --credentials)',
    )
    .option(
      '--allowed-hosts <names>',
      'host names clients may address this server by, besides IP addresses and localhost (comma-separated; .example.com allows its subdomains); checked without --credentials always, with it when given',
    )
    .option(
      '--max-body-memory <MiB>',
      'request bodies held in memory at once, all requests together; past it requests get 503',
      String(defaults.maxBodyMemoryMiB),
    )
    .option(
      '--threads <n>',
      'threads that serve HTTP in front of the one that owns the store (1: everything on one thread)',
      String(defaults.threads),
    )
    .option('--amqp-port <port>', 'serve AMQP 0-9-1 on this port too (off by default; 0 picks a free one)');
  // The AMQP listener's limits follow its port in the help.
  return (
    addQuotaFlags(addAmqpFlags(command))
      .addOption(
        new Option('--console <state>', 'the web console under /console')
          .choices(['on', 'off'])
          .default(defaults.console),
      )
      .addOption(
        new Option('--log-level <level>', 'log level')
          .choices(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
          .default(defaults.logLevel),
      )
      .option(
        '--shutdown-grace <seconds>',
        'on SIGTERM, answer 503 on /ready for this long while still serving, then drain (give load balancers time to notice)',
        '0',
      )
      .addHelpText(
        'after',
        `
Examples:
  $ redrive serve
  $ redrive serve --port 9324 --data-dir /var/lib/redrive --durability power
  $ redrive serve --storage memory --log-level warn
  $ redrive serve --storage postgres://redrive@db:5432/redrive --amqp-port 5672 --credentials keys.json
  $ redrive serve --config redrive.yaml --metrics-address 127.0.0.1:9100
`,
      )
      .addOption(
        new Option('--clock <clock>', 'manual: time moves only via POST /_redrive/clock (tests only)')
          .choices(['system', 'manual'])
          .default('system')
          .hideHelp(),
      )
      // A bad flag is a start-up failure like any other: one JSON line, as the logs.
      .configureOutput({ outputError: (message) => serverLog('info').fatal(message.replace(/^error: /, '').trim()) })
      .action(async (opts, cmd: Command) => {
        const log = serverLog(opts.logLevel);
        // The server's modules load here, not when the CLI starts: client commands never need them.
        const { startServer } = await import('../server/app.js');
        const { ConfigError } = await import('../server/config-file.js');
        const { stopOnSignals } = await import('./shutdown.js');
        const { guardProcess } = await import('../server/process-guard.js');
        const { closeIntrinsics } = await import('../server/closed-intrinsics.js');
        // Before anything reads a client's byte; the modules above are loaded and initialised.
        closeIntrinsics();
        let server: RunningServer;
        try {
          const port = parsePort(opts.port);
          const amqpPort = opts.amqpPort === undefined ? undefined : parsePort(opts.amqpPort, '--amqp-port');
          // Else the AMQP listener takes the port first and the HTTP one reads as someone else's.
          if (amqpPort === port && port !== 0)
            throw new StartupError(`--amqp-port ${amqpPort}: the same port as --port; give AMQP a port of its own`);
          server = await startServer(
            {
              ...defaults,
              ...opts,
              port,
              configFile: opts.config,
              shutdownGraceMs: seconds(opts.shutdownGrace, '--shutdown-grace') * 1000,
              maxBodyMemoryMiB: mebibytes(opts.maxBodyMemory, '--max-body-memory'),
              threads: threadCount(opts.threads),
              amqpPort,
              trustProxy: opts.trustProxy === undefined ? undefined : trustProxy(opts.trustProxy),
              amqpLimits: amqpLimitsFrom(opts),
              ...quotasFrom(opts),
              storageFromFlag: cmd.getOptionValueSource('storage') === 'cli',
            },
            log,
          );
        } catch (e) {
          // What the user can fix is one line; anything else is a bug, logged with its stack.
          if (e instanceof StartupError || e instanceof ConfigError || e instanceof SqliteUnavailableError)
            log.fatal((e as Error).message);
          else log.fatal({ err: e }, `could not start: ${(e as Error).message}`);
          process.exit(1);
        }
        guardProcess(server.log);
        // Policies change without a restart: edit the file, then `kill -HUP <pid>`. A file
        // that does not validate is logged and ignored; the policies in force stay.
        process.on('SIGHUP', () => {
          server
            .reload()
            .catch((err: Error) => server.log.error({ err: err.message }, 'config reload failed; policies unchanged'));
        });
        stopOnSignals(server);
      })
  );
}

function trustProxy(value: string): string[] {
  try {
    return parseTrustProxy(value);
  } catch (e) {
    throw new StartupError(`--trust-proxy ${JSON.stringify(value)}: ${(e as Error).message}`);
  }
}

function mebibytes(value: string, flag: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || n < 1)
    throw new StartupError(`${flag} ${JSON.stringify(value)}: must be a whole number of MiB, 1 or more`);
  return n;
}

function threadCount(value: string): number {
  // The number's own check (start-up.ts) words the line; a text that is no whole number gets it too.
  const n = /^\d+$/.test(value.trim()) ? Number(value) : Number.NaN;
  if (Number.isNaN(n))
    throw new StartupError(`--threads ${JSON.stringify(value)}: must be a whole number from 1 to ${MAX_THREADS}`);
  checkThreads(n);
  return n;
}

function seconds(value: string, flag: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0)
    throw new StartupError(`${flag} ${JSON.stringify(value)}: must be a number of seconds, 0 or more`);
  return n;
}

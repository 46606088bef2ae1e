import type { Command } from 'commander';
import { DEFAULT_AMQP_LIMITS, type AmqpLimits } from '../protocols/amqp/limits.js';
import { StartupError } from '../server/start-up.js';

type Unit = 'seconds' | 'count' | 'bytes';

/** `redrive serve`'s flags for the AMQP listener's limits (docs/security.md). */
const FLAGS: [flag: string, key: keyof AmqpLimits, unit: Unit, description: string][] = [
  [
    '--amqp-handshake-timeout',
    'handshakeTimeoutMs',
    'seconds',
    'drop an AMQP socket that has not opened its connection within this many seconds',
  ],
  [
    '--amqp-max-handshakes',
    'maxHandshakes',
    'count',
    'AMQP sockets still in their handshake at once; more are closed on accept',
  ],
  [
    '--amqp-max-handshakes-per-address',
    'maxHandshakesPerAddress',
    'count',
    'AMQP sockets in their handshake from one client address (IPv6: one /64); more are closed on accept',
  ],
  ['--amqp-channel-max', 'channelMax', 'count', 'channels per AMQP connection (proposed in connection.tune)'],
  ['--amqp-max-connections', 'maxConnections', 'count', 'open AMQP connections in total; more are refused with 530'],
  [
    '--amqp-max-connections-per-user',
    'maxConnectionsPerUser',
    'count',
    'open AMQP connections per user; more are refused with 530',
  ],
  [
    '--amqp-max-unfinished-bytes',
    'maxUnfinishedBytes',
    'bytes',
    'bytes of partly received messages per AMQP connection; over it the connection is closed with 506',
  ],
  ['--amqp-max-unfinished-bytes-total', 'maxUnfinishedBytesTotal', 'bytes', 'the same over all AMQP connections'],
  [
    '--amqp-max-queued-bytes-total',
    'maxQueuedBytesTotal',
    'bytes',
    'bytes of AMQP messages waiting to be stored; over it publishing connections are blocked until under half',
  ],
  [
    '--amqp-max-message-size',
    'maxMessageBytes',
    'bytes',
    "largest AMQP message body (RabbitMQ's max_message_size); larger publishes close their channel with 406",
  ],
  [
    '--amqp-max-unacked',
    'maxUnacked',
    'count',
    'unacknowledged deliveries per AMQP connection; past it consumers wait for acks',
  ],
  [
    '--amqp-max-consumers-per-channel',
    'maxConsumersPerChannel',
    'count',
    'consumers per AMQP channel; basic.consume over it is refused with 530',
  ],
  [
    '--amqp-max-consumers-per-account',
    'maxConsumersPerAccount',
    'count',
    'AMQP consumers per account; basic.consume over it is refused with 406',
  ],
  [
    '--amqp-max-bindings-per-account',
    'maxBindingsPerAccount',
    'count',
    'AMQP bindings per account; queue.bind and exchange.bind over it are refused with 406',
  ],
  [
    '--amqp-max-bindings-per-exchange',
    'maxBindingsPerExchange',
    'count',
    'AMQP bindings from one exchange; over it binds are refused with 406',
  ],
];

const shown = (key: keyof AmqpLimits, unit: Unit) =>
  String(unit === 'seconds' ? DEFAULT_AMQP_LIMITS[key] / 1000 : DEFAULT_AMQP_LIMITS[key]);

export function addAmqpFlags(cmd: Command): Command {
  for (const [flag, key, unit, description] of FLAGS)
    cmd.option(`${flag} <${unit === 'count' ? 'n' : unit}>`, description, shown(key, unit));
  return cmd;
}

/** The limits the flags give; a value that is not a positive number is a start-up error. */
export function amqpLimitsFrom(opts: Record<string, unknown>): Partial<AmqpLimits> {
  const limits: Partial<AmqpLimits> = {};
  for (const [flag, key, unit] of FLAGS) {
    const name = flag.slice(2).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
    const raw = opts[name];
    if (raw === undefined) continue;
    const n = Number(raw);
    const ok = Number.isFinite(n) && n > 0 && (unit === 'seconds' || Number.isInteger(n));
    if (!ok)
      throw new StartupError(
        `${flag} ${JSON.stringify(raw)}: must be ${unit === 'seconds' ? 'a number of seconds' : 'a whole number'}, more than 0`,
      );
    limits[key] = unit === 'seconds' ? Math.round(n * 1000) : n;
  }
  // A message is received whole before it is stored: it never exceeds the unfinished-bytes budget.
  const { maxMessageBytes, maxUnfinishedBytes } = { ...DEFAULT_AMQP_LIMITS, ...limits };
  limits.maxMessageBytes = Math.min(maxMessageBytes, maxUnfinishedBytes);
  return limits;
}

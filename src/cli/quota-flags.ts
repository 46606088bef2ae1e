import type { Command } from 'commander';
import { DEFAULT_ACCOUNT_QUOTAS, DEFAULT_SESSIONS_PER_ACCOUNT } from '../engine/queues/quotas.js';
import type { ServerConfig } from '../server/server-config.js';
import { StartupError } from '../server/start-up.js';

type Limits = Pick<ServerConfig, 'clientLimits' | 'quotas' | 'sessionsPerAccount'>;

/**
 * `redrive serve`'s flags for what one client address and one account may hold
 * (docs/security.md, "Limits per client address and quotas per account"): each a whole
 * number, more than 0, with the default shown (or what it follows) and where it goes.
 */
const FLAGS: [flag: string, shown: string | undefined, description: string, set: (l: Limits, n: number) => void][] = [
  [
    '--max-connections-per-client',
    undefined,
    'HTTP connections one client address (IPv6: its /64) may keep open; more are closed on accept (default: a quarter of the request limit)',
    (l, n) => (l.clientLimits = { ...l.clientLimits, maxConnectionsPerClient: n }),
  ],
  [
    '--max-unfinished-requests-per-client',
    undefined,
    'HTTP requests of one client address still sending their bodies; more get 503 (default: an eighth of the request limit)',
    (l, n) => (l.clientLimits = { ...l.clientLimits, maxUnfinishedPerClient: n }),
  ],
  [
    '--max-queues-per-account',
    String(DEFAULT_ACCOUNT_QUOTAS.queues),
    'queues one account may have; CreateQueue past it is OverLimit',
    (l, n) => (l.quotas = { ...l.quotas, queues: n }),
  ],
  [
    '--max-policies-per-account',
    String(DEFAULT_ACCOUNT_QUOTAS.policies),
    'management-API policies one account may have',
    (l, n) => (l.quotas = { ...l.quotas, policies: n }),
  ],
  [
    '--max-move-tasks-per-account',
    String(DEFAULT_ACCOUNT_QUOTAS.moveTasks),
    'active message move tasks one account may have',
    (l, n) => (l.quotas = { ...l.quotas, moveTasks: n }),
  ],
  [
    '--max-long-polls-per-account',
    undefined,
    "long polls one account's callers may have waiting at once (default: half of the server's long polls)",
    (l, n) => (l.quotas = { ...l.quotas, longPolls: n }),
  ],
  [
    '--max-console-sessions-per-account',
    String(DEFAULT_SESSIONS_PER_ACCOUNT),
    "console sessions one account may hold; one more signs out that account's oldest",
    (l, n) => (l.sessionsPerAccount = n),
  ],
];

export function addQuotaFlags(cmd: Command): Command {
  for (const [flag, shown, description] of FLAGS) cmd.option(`${flag} <n>`, description, shown);
  return cmd;
}

/** The limits the flags give; a value that is not a whole number above 0 is a start-up error. */
export function quotasFrom(opts: Record<string, unknown>): Limits {
  const limits: Limits = {};
  for (const [flag, , , set] of FLAGS) {
    const raw = opts[flag.slice(2).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())];
    if (raw === undefined) continue;
    const n = Number(raw);
    if (!/^\d+$/.test(String(raw).trim()) || n < 1)
      throw new StartupError(`${flag} ${JSON.stringify(raw)}: must be a whole number, more than 0`);
    set(limits, n);
  }
  return limits;
}

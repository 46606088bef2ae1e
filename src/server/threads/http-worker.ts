import { parentPort, workerData } from 'node:worker_threads';
import type { WireRequest } from '../../protocols/wire.js';
import type { ClientLimits } from '../admission.js';
import { closeIntrinsics } from '../closed-intrinsics.js';
import { HttpServer } from '../http-server.js';
import { sqsErrors, type Exchange, type SubApp } from '../mount.js';
import { mountTable } from '../mount-table.js';
import type { GuardOptions } from '../request-guard.js';
import { serverLog } from '../server-config.js';
import { SqsApp } from '../sqs-app.js';
import { OwnerLink } from './owner-link.js';

/** What the owner tells an HTTP thread as it starts it (structured-cloned). */
export interface ThreadConfig {
  /** 1..N, in its log lines. */
  index: number;
  /** N: the threads share the process's limits at the door (admission.ts). */
  threads: number;
  /** Its own descriptor of the listening socket (listen-fd.ts). */
  fd: number;
  host: string;
  /** The port the socket is bound to: queue URLs name it when a request has no Host header. */
  port: number;
  logLevel: string;
  guard: GuardOptions;
  trustProxy?: string[];
  clientLimits?: ClientLimits;
  bodyBudget?: number;
  accountId: string;
  region: string;
  console: boolean;
  /** Whether --credentials is on: the secrets stay on the owner, which checks them (SqsBackend.checkSecret). */
  signed: boolean;
  /** `--clock manual` (tests): /_redrive/clock goes to the owner, and /_redrive/crash-thread ends this thread. */
  manualClock: boolean;
  /** Whether `redrive serve` closed the owner's intrinsics: each thread has its own (closed-intrinsics.ts). */
  closeIntrinsics: boolean;
}

/**
 * An HTTP thread of `--threads N` (docs/scaling.md): the HTTP front, SigV4, decoding and
 * encoding of the SQS API here; each decoded action, and every request for the console,
 * the management API, /metrics and /ready, goes to the owner thread, which holds the
 * engine and the store.
 */
function startThread(cfg: ThreadConfig): void {
  const log = serverLog(cfg.logLevel).child({ thread: cfg.index });
  const link = new OwnerLink(parentPort!);
  const forward =
    (app: string) =>
    (req: WireRequest, x: { client: string }): ReturnType<OwnerLink['forward']> =>
      link.forward(app, req, (x as Exchange).requestId ?? '', x.client);
  const sqs = new SqsApp(link, {
    accountId: cfg.accountId,
    region: cfg.region,
    host: cfg.host,
    port: cfg.port,
    // Signed mode; the secrets are the owner's (the map is only asked whether it is there).
    credentials: cfg.signed ? new Map() : undefined,
    requestTally: { count: (accountId, accessKey, client) => link.tally(accountId, accessKey, client) },
  });
  const mounts = mountTable({
    sqs,
    readiness: { check: () => link.ready() },
    console: cfg.console ? { handle: forward('console') } : undefined,
    management: { handle: forward('management') },
    metrics: { onMainPort: (req, client) => link.forward('metrics', req, '', client) },
  });
  if (cfg.manualClock) mounts.splice(mounts.length - 1, 0, ...testHooks(forward('sqs')));
  const http = new HttpServer({
    host: cfg.host,
    port: cfg.port,
    fd: cfg.fd,
    threads: cfg.threads,
    log,
    trustProxy: cfg.trustProxy,
    clientLimits: cfg.clientLimits,
    guard: cfg.guard,
    bodyBudget: cfg.bodyBudget,
    mounts,
  });
  link.onClose = (drainMs) => {
    http.close(drainMs).then(
      () => link.post({ t: 'drained' }),
      (err: unknown) => {
        log.error({ err }, 'could not drain this HTTP thread');
        link.post({ t: 'drained' });
      },
    );
  };
  if (cfg.closeIntrinsics) closeIntrinsics();
  http.listen().then(
    () => link.post({ t: 'listening' }),
    (err: unknown) => {
      // The owner sees the thread exit with this error and starts another.
      throw err;
    },
  );
}

/** `--clock manual` only (tests): the owner's clock route, and a way to make this thread throw. */
function testHooks(toOwner: SubApp['handle']): SubApp[] {
  const hook = (path: string, handle: SubApp['handle']): SubApp => ({
    name: 'test-hook',
    area: 'sqs',
    logAs: 'http',
    errors: sqsErrors,
    matches: (req) => req.path === path,
    handle,
  });
  return [
    hook('/_redrive/clock', toOwner),
    hook('/_redrive/crash-thread', () => {
      setImmediate(() => {
        throw new Error('crash requested through /_redrive/crash-thread (--clock manual)');
      });
      return { status: 200, headers: { 'content-type': 'application/json' }, body: '{"crashing":true}' };
    }),
  ];
}

startThread(workerData as ThreadConfig);

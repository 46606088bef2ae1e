import type { Logger } from 'pino';

/**
 * The last line of defence of "no request may end the process": an exception or a rejected
 * promise that nothing handled is logged with what is known of it, and the server keeps
 * serving. Every request path already answers its own failures (http-server.ts, respond.ts),
 * so reaching here is a bug to fix, not a state to stop on: the stores commit or roll back
 * whole transactions, so a failed request leaves no half-written state behind.
 */
export function guardProcess(log: Logger): void {
  process.on('uncaughtException', (err, origin) => {
    log.error({ err, origin }, 'uncaught exception (a bug): logged, the server keeps serving');
  });
  process.on('unhandledRejection', (reason) => {
    log.error({ err: reason }, 'unhandled promise rejection (a bug): logged, the server keeps serving');
  });
}

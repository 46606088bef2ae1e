import type { Logger } from 'pino';
import type { RequestContext } from '../engine/kernel/types.js';
import type { WireRequest, WireResponse } from '../protocols/wire.js';

/** What the HTTP front learned about a request while routing it, for its access log line. */
export interface RequestSeen {
  protocol: 'json' | 'query' | 'console' | 'http';
  /** The SQS request's context: the caller's account, and once dispatched, the action and its input. */
  ctx?: RequestContext;
}

/**
 * The access log line of one request, at `debug`. The caller checks the level once and
 * calls this only when it is enabled, so at `info` a request costs nothing here.
 */
export function logRequest(
  log: Logger,
  req: WireRequest,
  seen: RequestSeen,
  response: WireResponse,
  requestId: string,
  startedMs: number,
): void {
  const ctx = seen.ctx;
  const errorCode = response.headers['x-amzn-query-error']?.split(';', 1)[0];
  log.debug(
    {
      requestId,
      protocol: seen.protocol,
      method: req.method,
      path: req.path,
      action: ctx?.action ?? consoleAction(req, seen),
      queue: ctx?.input ? queueName(ctx.input) : undefined,
      status: response.status,
      errorCode,
      ms: Math.round((performance.now() - startedMs) * 100) / 100,
      account: ctx?.accountId,
    },
    'request',
  );
}

/** The console's API calls name their action in the JSON protocol's header. */
function consoleAction(req: WireRequest, seen: RequestSeen): string | undefined {
  const target = seen.protocol === 'console' ? req.headers['x-amz-target'] : undefined;
  return typeof target === 'string' ? target.replace(/^AmazonSQS\./, '') : undefined;
}

/** The queue an action is about: its name, the last part of its URL, or of a move task's source ARN. */
function queueName(input: Record<string, unknown>): string | undefined {
  if (typeof input.QueueName === 'string') return input.QueueName;
  if (typeof input.QueueUrl === 'string') return input.QueueUrl.slice(input.QueueUrl.lastIndexOf('/') + 1) || undefined;
  if (typeof input.SourceArn === 'string')
    return input.SourceArn.slice(input.SourceArn.lastIndexOf(':') + 1) || undefined;
  return undefined;
}

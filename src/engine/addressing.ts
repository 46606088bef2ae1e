import { errors } from './errors.js';
import type { RequestContext } from './types.js';

export interface QueueAddress {
  accountId: string;
  name: string;
}

export function queueUrl(ctx: RequestContext, accountId: string, name: string): string {
  return `${ctx.baseUrl}/${accountId}/${name}`;
}

export function queueArn(region: string, accountId: string, name: string): string {
  return `arn:aws:sqs:${region}:${accountId}:${name}`;
}

/**
 * Finds the account and queue name in a queue URL. Like SQS, only the path matters:
 * a client may reach the server by another host name than the one it was given.
 */
export function parseQueueUrl(url: unknown, ctx: RequestContext): QueueAddress {
  if (url === undefined || url === null || url === '') throw errors.missingParameter('QueueUrl');
  if (typeof url !== 'string') throw errors.queueDoesNotExist();
  let path = url;
  const scheme = url.indexOf('://');
  if (scheme >= 0) {
    const slash = url.indexOf('/', scheme + 3);
    path = slash < 0 ? '' : url.slice(slash);
  }
  const parts = path.split('?')[0]!.split('/').filter(Boolean);
  if (parts.length === 2) return { accountId: parts[0]!, name: decodeName(parts[1]!) };
  if (parts.length === 1 && scheme < 0) return { accountId: ctx.accountId, name: parts[0]! };
  throw errors.queueDoesNotExist();
}

function decodeName(encoded: string): string {
  try {
    return decodeURIComponent(encoded);
  } catch {
    throw errors.queueDoesNotExist();
  }
}

export function parseQueueArn(arn: string): (QueueAddress & { region: string }) | undefined {
  const m = /^arn:aws:sqs:([^:]+):([^:]+):([^:]+)$/.exec(arn);
  return m ? { region: m[1]!, accountId: m[2]!, name: m[3]! } : undefined;
}

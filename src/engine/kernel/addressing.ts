import { errors } from './errors.js';
import type { RequestContext } from './types.js';

/** Where a queue lives: its key in the store is (account, region, name), as in SQS. */
export interface QueueAddress {
  accountId: string;
  region: string;
  name: string;
}

/** The server's region when `--region` is not given, as for SQS's own clients. */
export const DEFAULT_REGION = 'us-east-1';

/**
 * Whether `s` can be a region: one ARN component and one label of a host name, lowercase
 * letters, digits and hyphens, as in `us-east-1` (or `elasticmq`, which some local setups use).
 */
export function isRegionName(s: string): boolean {
  return s.length <= 32 && /^[a-z0-9]+(-[a-z0-9]+)*$/.test(s);
}

/**
 * The region a host name of the form `sqs.<region>.<anything>` names (SQS's own
 * endpoints, or `sqs.eu-west-1.localhost` pointed at Redrive); undefined otherwise. The
 * label must be shaped like an AWS region (`us-east-1`, `us-gov-west-1`), so that a
 * deployment's own name, such as `sqs.example.com` or `sqs.internal.corp`, names none.
 */
export function regionOfHost(host: string | undefined): string | undefined {
  const m = host === undefined ? null : /^sqs\.([^.]+)\.[^/]+$/.exec(host);
  return m && /^[a-z]{2,}(-[a-z]+)+-\d+$/.test(m[1]!) && isRegionName(m[1]!) ? m[1] : undefined;
}

/**
 * The queue's URL as the caller addressed this server (`ctx.baseUrl`). When the caller's
 * host names a region (`sqs.<region>.<domain>`), another region's queue gets that
 * region's host, so its URL resolves there in turn. When it names none, a queue outside
 * the server's default region gets its region as the first path segment
 * (`http://127.0.0.1:9324/eu-west-1/<account>/<name>`): the same name in two regions then
 * has two URLs, as in SQS, and each one is callable through the same endpoint. A queue of
 * the default region keeps the plain `/<account>/<name>` URL.
 */
export function queueUrl(ctx: RequestContext, queue: QueueAddress, defaultRegion: string): string {
  const m = /^(https?:\/\/)([^/]+)$/.exec(ctx.baseUrl);
  const hostRegion = m ? regionOfHost(m[2]!.toLowerCase()) : undefined;
  if (m && hostRegion !== undefined) {
    const base =
      hostRegion === queue.region
        ? ctx.baseUrl
        : `${m[1]}sqs.${queue.region}.${m[2]!.slice(`sqs.${hostRegion}.`.length)}`;
    return `${base}/${queue.accountId}/${nameInAddress(queue.name)}`;
  }
  const region = queue.region === defaultRegion ? '' : `/${queue.region}`;
  return `${ctx.baseUrl}${region}/${queue.accountId}/${nameInAddress(queue.name)}`;
}

/**
 * A queue's name in its URL and ARN: percent-encoded (encodeURIComponent), which leaves
 * every SQS name as it is and makes an AMQP name (`app:events`, `tenant/orders`,
 * `celery@host.celery.pidbox`, any UTF-8) one path segment and one ARN field.
 */
function nameInAddress(name: string): string {
  return encodeURIComponent(name);
}

export function queueArn(region: string, accountId: string, name: string): string {
  return `arn:aws:sqs:${region}:${accountId}:${nameInAddress(name)}`;
}

/**
 * Finds the queue a URL names. Like SQS, the path gives the account and name: a client
 * may reach the server by another host name than the one it was given. The region is
 * the path's when it has one (`/<region>/<account>/<name>`), else the host's when it names
 * one (`sqs.<region>.…`), else the request's.
 */
export function parseQueueUrl(url: unknown, ctx: Pick<RequestContext, 'accountId' | 'region'>): QueueAddress {
  if (url === undefined || url === null || url === '') throw errors.missingParameter('QueueUrl');
  if (typeof url !== 'string') throw errors.queueDoesNotExist();
  // A client sends to the same queue over and over: the last URL's address is kept.
  const last = lastParsed;
  if (last?.url === url && last.region === ctx.region && last.accountId === ctx.accountId) return last.address;
  const address = Object.freeze(parseUrl(url, ctx));
  lastParsed = { url, region: ctx.region, accountId: ctx.accountId, address };
  return address;
}

/** The last URL parseQueueUrl read, with the context it depends on, and its address. */
let lastParsed: { url: string; region: string; accountId: string; address: QueueAddress } | undefined;

function parseUrl(url: string, ctx: Pick<RequestContext, 'accountId' | 'region'>): QueueAddress {
  let path = url;
  let region = ctx.region;
  const scheme = url.indexOf('://');
  if (scheme >= 0) {
    const slash = url.indexOf('/', scheme + 3);
    path = slash < 0 ? '' : url.slice(slash);
    region = regionOfHost(url.slice(scheme + 3, slash < 0 ? undefined : slash).toLowerCase()) ?? region;
  }
  const parts = path.split('?')[0]!.split('/').filter(Boolean);
  if (parts.length === 2) return { accountId: parts[0]!, region, name: decodeName(parts[1]!) };
  // `/<region>/<account>/<name>`: a queue outside the default region (see queueUrl).
  if (parts.length === 3 && isRegionName(parts[0]!))
    return { accountId: parts[1]!, region: parts[0]!, name: decodeName(parts[2]!) };
  if (parts.length === 1 && scheme < 0) return { accountId: ctx.accountId, region, name: parts[0]! };
  throw errors.queueDoesNotExist();
}

function decodeName(encoded: string): string {
  try {
    return decodeURIComponent(encoded);
  } catch {
    throw errors.queueDoesNotExist();
  }
}

/**
 * `arn:aws:sqs:<region>:<12-digit account>:<queue name>`, each part by the rule it has
 * where it is made (a region name, an account id, a queue name as nameInAddress writes
 * it: what encodeURIComponent leaves, and %XX), so no ARN a client gives can carry a
 * colon or a path; a decoded name must hold no control character (a newline) and fit
 * AMQP's 255 bytes.
 */
const QUEUE_ARN = /^arn:aws:sqs:([a-z0-9-]{1,64}):(\d{12}):([A-Za-z0-9_.!~*'()%-]{1,765})$/;
const CONTROL = /[\u0000-\u001f\u007f]/;

export function parseQueueArn(arn: string): QueueAddress | undefined {
  const m = QUEUE_ARN.exec(arn);
  if (!m) return undefined;
  let name: string;
  try {
    name = decodeURIComponent(m[3]!);
  } catch {
    return undefined;
  }
  if (CONTROL.test(name) || Buffer.byteLength(name) > 255) return undefined;
  return { region: m[1]!, accountId: m[2]!, name };
}

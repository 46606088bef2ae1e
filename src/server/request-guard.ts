import type { IncomingHttpHeaders } from 'node:http';
import { isIP } from 'node:net';

/**
 * What a web page in the operator's browser must not be able to do to a server on their
 * machine (docs/security.md, "Open mode"):
 * - DNS rebinding: a page on `evil.example` re-resolves its own name to 127.0.0.1 and then
 *   reads the answers as same-origin. Its requests carry `Host: evil.example`, so the Host
 *   header must name this server: an IP address (which no DNS answer can rebind), `localhost`
 *   or a name under `.localhost` (browsers resolve those to loopback themselves), or a name
 *   given with `--allowed-hosts`.
 * - Cross-site requests: without --credentials nothing is signed, so an `<img>` or an
 *   auto-submitted `<form>` on any page could send SQS actions. Browsers say where a request
 *   comes from (Origin, Sec-Fetch-Site); a form body with none of that is refused unless it
 *   carries what no page can add without a CORS preflight (which is never granted): a SigV4
 *   Authorization header, an SQS JSON target, or an AWS SDK's own headers or User-Agent.
 */
export interface GuardOptions {
  /** Whether --credentials is set: signatures then protect the API, and the Host check is opt-in. */
  credentials: boolean;
  /** `--allowed-hosts`: names (lowercase); `.example.com` allows that name and every name under it. */
  allowedHosts: string[];
}

/** Which part of the server a path is: they are guarded differently (`api`: Host and cross-site checks only, also for /metrics). */
export type Area = 'sqs' | 'console' | 'api' | 'probe';

export interface Refusal {
  /** Said to the client and logged. */
  message: string;
}

/** Every client of the SQS API that the form rule lets through (see sdkHeaders). */
const SDK_AGENT = /^(aws-sdk|aws-cli|boto3|botocore)/i;
const FORM_TYPES = /^\s*(application\/x-www-form-urlencoded|multipart\/form-data|text\/plain)\s*(;|$)/i;

export class RequestGuard {
  constructor(private readonly opts: GuardOptions) {}

  /** Why this request is refused before its body is read, or undefined to serve it. */
  check(area: Area, headers: IncomingHttpHeaders): Refusal | undefined {
    // Load balancers and orchestrators probe by whatever name they know the server by.
    if (area === 'probe') return undefined;
    const host = headers.host;
    if ((!this.opts.credentials || this.opts.allowedHosts.length > 0) && !this.hostAllowed(host)) {
      return {
        message: `The Host header ${JSON.stringify(String(host ?? ''))} does not name this server: start it with --allowed-hosts <name> to serve it under that name.`,
      };
    }
    // With --credentials every SQS request is signed; the console has its own CSRF checks.
    if (this.opts.credentials || area === 'console') return undefined;
    const site = headers['sec-fetch-site'];
    if (site === 'cross-site' || site === 'same-site') {
      return { message: 'Requests from another site are refused: the server runs without --credentials.' };
    }
    const origin = headers.origin;
    if (origin !== undefined && !isOwnOrigin(origin, host)) {
      return {
        message: `Requests from origin ${JSON.stringify(origin)} are refused: the server runs without --credentials.`,
      };
    }
    if (area === 'sqs' && isForm(headers) && !signedOrSdk(headers)) {
      return {
        message:
          'An unsigned form request without an AWS SDK header is refused (a web page can send one): sign it, or send it as an SDK does.',
      };
    }
    return undefined;
  }

  /** Whether a Host header names this server (see the class comment). */
  hostAllowed(host: string | undefined): boolean {
    // Clients keep one Host header for every request: remember the last answer.
    if (host === this.lastHost && host !== undefined) return this.lastAllowed;
    const allowed = this.nameAllowed(host);
    this.lastHost = host;
    this.lastAllowed = allowed;
    return allowed;
  }

  private lastHost?: string;
  private lastAllowed = false;

  private nameAllowed(host: string | undefined): boolean {
    const name = hostName(host);
    if (name === undefined) return false;
    if (isIP(name) !== 0 || name === 'localhost' || name.endsWith('.localhost')) return true;
    return this.opts.allowedHosts.some((allowed) =>
      allowed.startsWith('.') ? name === allowed.slice(1) || name.endsWith(allowed) : name === allowed,
    );
  }
}

/** The name in a Host header, lowercase, without port, brackets or a final dot. */
function hostName(host: string | undefined): string | undefined {
  if (!host) return undefined;
  const m = /^(?:\[([0-9a-f:.]+)\]|([^:[\]]+))(?::\d{1,5})?$/i.exec(host.trim());
  const name = (m?.[1] ?? m?.[2])?.toLowerCase().replace(/\.$/, '');
  return name || undefined;
}

/** Whether a browser's Origin header is this server's own origin, as reached by `host`. */
function isOwnOrigin(origin: string, host: string | undefined): boolean {
  return host !== undefined && (origin === `http://${host}` || origin === `https://${host}`);
}

/**
 * Whether a page could have sent this body without a CORS preflight: a form's types, and
 * also no type at all when there is a body (`fetch` with `mode: 'no-cors'` sends a Blob or
 * an ArrayBuffer without one). A request without a body (a GET) has neither.
 */
function isForm(headers: IncomingHttpHeaders): boolean {
  const contentType = headers['content-type'];
  if (contentType === undefined)
    return headers['content-length'] !== undefined || headers['transfer-encoding'] !== undefined;
  return FORM_TYPES.test(contentType);
}

/**
 * Headers a page cannot add to a cross-site request without a CORS preflight. A presigned
 * URL's X-Amz-Signature does not count: a page can write it into a form's action URL, and
 * without --credentials nothing checks it.
 */
function signedOrSdk(headers: IncomingHttpHeaders): boolean {
  const auth = headers.authorization;
  if (typeof auth === 'string' && auth.startsWith('AWS4-HMAC-SHA256 ')) return true;
  if (
    headers['x-amz-target'] !== undefined ||
    headers['amz-sdk-invocation-id'] !== undefined ||
    headers['amz-sdk-request'] !== undefined
  )
    return true;
  const agent = headers['user-agent'];
  return typeof agent === 'string' && SDK_AGENT.test(agent);
}

/** `--allowed-hosts a,b,.c`: the names, lowercase; a bad entry is the flag's error. */
export function parseAllowedHosts(raw: string | undefined): string[] {
  if (raw === undefined || raw.trim() === '') return [];
  return raw
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean)
    .map((h) => {
      if (!/^\.?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\.?$/.test(h)) {
        throw new Error(
          `--allowed-hosts ${JSON.stringify(raw)}: ${JSON.stringify(h)} is not a host name: give names separated by commas, such as queue.example.com,.internal`,
        );
      }
      return h.replace(/\.$/, '');
    });
}

import type { Engine } from '../engine/engine.js';
import { isRegionName } from '../engine/kernel/addressing.js';
import { SqsError } from '../engine/kernel/errors.js';
import type { RequestContext } from '../engine/kernel/types.js';
import { engineDispatch, type Dispatch } from '../protocols/dispatch.js';
import { handleJson, jsonError } from '../protocols/json/json-adapter.js';
import type { WireRequest, WireResponse } from '../protocols/wire.js';
import type { Credentials } from '../auth/credentials.js';
import { authenticator } from '../auth/password.js';
import type { BrokerError, BrokerRequest } from '../wire/broker-api.js';
import { serveAsset } from './assets.js';
import { fromOtherSite, hasCsrfToken } from './csrf.js';
import { pageRoute, renderNotFound, renderPage, renderSignIn } from './pages.js';
import { clearedCookie, sessionCookie, sessionIdOf, Sessions, type Session } from '../auth/console-sessions.js';
import { AuthThrottle, retryAfterSeconds } from '../auth/throttle.js';

export interface ConsoleOptions {
  engine: Engine;
  region: string;
  /** The account an open console (no credentials) acts as. */
  accountId: string;
  /** With credentials, the console asks for an access key and secret and acts as that key's account. */
  credentials?: Credentials;
  /** Failed sign-ins, shared with the other interfaces that check the same secrets. */
  throttle?: AuthThrottle;
  /** The management API's broker views, for the Connections and Exchanges pages (`broker` below). */
  broker?: BrokerViews;
  /** Signed-in sessions one account may hold (`--max-console-sessions-per-account`, src/auth/console-sessions.ts). */
  sessionsPerAccount?: number;
}

/**
 * What the console needs of the management API's broker views, which the server wires in
 * (src/server/management/broker-api.ts implements it): declared here so that the console
 * does not import the server.
 */
export interface BrokerViews {
  handle(r: BrokerRequest): Promise<WireResponse | undefined>;
}

/** Where the console's pages read the management API's broker views. */
const BROKER_API_PREFIX = '/console/api/rabbitmq/';

const SIGN_IN_FAILED = 'invalid access key or secret';
const SIGNED_OUT = 'Sign in to the console first.';
const OTHER_SITE = 'The console refused a request that did not come from its own pages.';

const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
};

/**
 * Everything under /console: the pages, their static files, sign-in and sign-out, and
 * `POST /console/api`, which hands SQS JSON requests to the same adapter as `POST /`
 * with the session's account as the caller.
 */
export class ConsoleRoutes {
  private readonly sessions: Sessions;
  private readonly throttle: AuthThrottle;
  private readonly authenticate;
  private readonly run: Dispatch;

  constructor(private readonly opts: ConsoleOptions) {
    this.authenticate = authenticator(opts);
    this.run = engineDispatch(opts.engine);
    this.throttle = opts.throttle ?? new AuthThrottle();
    this.sessions = new Sessions(undefined, opts.sessionsPerAccount);
  }

  get signInRequired(): boolean {
    return this.opts.credentials !== undefined;
  }

  async handle(req: WireRequest, { client, requestId }: { client: string; requestId: string }): Promise<WireResponse> {
    const { path, method } = req;
    if ((path.startsWith('/console/assets/') || path.startsWith('/console/wire/')) && method === 'GET')
      return (await serveAsset(path)) ?? notFound();
    const cookie = sessionIdOf(req.headers.cookie);
    // An open console's session comes from the cookie; a new one only for a page (below).
    const session = this.signInRequired
      ? this.sessions.get(cookie)
      : cookie === undefined
        ? undefined
        : this.sessions.open(this.opts.accountId, cookie);
    if (path === '/console/api') return method === 'POST' ? this.api(req, session, requestId) : methodNotAllowed();
    if (path.startsWith(BROKER_API_PREFIX)) return this.broker(req, session, client);
    if (path === '/console/sign-in') {
      if (method === 'POST') return this.signIn(req, client);
      if (method === 'GET')
        return this.signInRequired ? page(200, renderSignIn(undefined, nextOf(req.query))) : redirect('/console/');
      return methodNotAllowed();
    }
    if (path === '/console/sign-out') return method === 'POST' ? this.signOut(req, session) : methodNotAllowed();
    if (method !== 'GET' && method !== 'HEAD') return methodNotAllowed();
    const route = pageRoute(path);
    if (!session && this.signInRequired) {
      return route
        ? redirect(`/console/sign-in?next=${encodeURIComponent(path)}`)
        : page(404, renderNotFound(undefined, true));
    }
    const current = session ?? this.sessions.open(this.opts.accountId)!;
    const headers: Record<string, string> = session ? {} : { 'set-cookie': sessionCookie(current) };
    if (!route) return page(404, renderNotFound(current, this.signInRequired), headers);
    return page(200, renderPage(route, current, this.signInRequired), headers);
  }

  private async api(req: WireRequest, session: Session | undefined, requestId: string): Promise<WireResponse> {
    if (!session) return jsonError(new SqsError('AccessDenied', 'AccessDenied', 401, SIGNED_OUT));
    if (fromOtherSite(req) || !hasCsrfToken(req, session))
      return jsonError(new SqsError('AccessDenied', 'AccessDenied', 403, OTHER_SITE));
    // The page's region (`?region=`, sent as a header by api.ts), else the server's default.
    const asked = req.headers['x-redrive-region'];
    const region = typeof asked === 'string' && isRegionName(asked) ? asked : this.opts.region;
    const ctx: RequestContext = {
      accountId: session.accountId,
      region,
      baseUrl: `http://${req.headers.host}`,
      requestId,
    };
    return handleJson(this.run, ctx, req);
  }

  /**
   * `/console/api/rabbitmq/<path>`: the management API's broker views and connection close
   * as the session's account, for the Connections and Exchanges pages and a queue's
   * consumers. The console is a client of the same API as /api/, with its session in place
   * of basic auth and RabbitMQ's errors; every request must carry the session's CSRF token.
   */
  private async broker(req: WireRequest, session: Session | undefined, client: string): Promise<WireResponse> {
    if (!session) return brokerJson(401, { error: 'not_authorized', reason: SIGNED_OUT });
    if (fromOtherSite(req) || !hasCsrfToken(req, session))
      return brokerJson(403, { error: 'not_authorized', reason: OTHER_SITE });
    let parts: string[];
    try {
      parts = req.path
        .slice(BROKER_API_PREFIX.length)
        .split('/')
        .map((p) => decodeURIComponent(p));
    } catch {
      return brokerJson(400, { error: 'bad_request', reason: 'invalid percent-encoding in the path' });
    }
    const answer = await this.opts.broker?.handle({
      method: req.method,
      parts,
      query: req.query,
      headers: req.headers,
      account: session.accountId,
      who: { by: 'console', accessKey: session.accessKeyId, client },
    });
    return answer ?? brokerJson(404, { error: 'Object Not Found', reason: 'Not Found' });
  }

  private signIn(req: WireRequest, client: string): WireResponse {
    if (!this.opts.credentials) return redirect('/console/');
    const form = new URLSearchParams(req.body.toString('utf8'));
    const next = safeNext(form.get('next'));
    if (fromOtherSite(req))
      return page(403, renderSignIn('This sign-in did not come from the console’s own page.', next));
    const keyId = form.get('accessKeyId') ?? '';
    // Answered at once while this client must wait: no request is held, no slot kept.
    const wait = this.throttle.wait(client, keyId);
    if (wait > 0) {
      const seconds = retryAfterSeconds(wait);
      return page(429, renderSignIn(`too many failed sign-ins: try again in ${seconds} s`, next, keyId.slice(0, 128)), {
        'retry-after': String(seconds),
      });
    }
    const account = this.authenticate(keyId, form.get('secretAccessKey') ?? '', client);
    if (account === undefined) {
      this.throttle.failed(client, keyId);
      return page(401, renderSignIn(SIGN_IN_FAILED, next, keyId.slice(0, 128)));
    }
    this.throttle.succeeded(client, keyId);
    const session = this.sessions.create(account, keyId);
    if (!session)
      return page(503, renderSignIn('too many accounts are signed in: try again later', next, keyId.slice(0, 128)), {
        'retry-after': '60',
      });
    return redirect(next, { 'set-cookie': sessionCookie(session) });
  }

  private signOut(req: WireRequest, session: Session | undefined): WireResponse {
    if (!session)
      return redirect(this.signInRequired ? '/console/sign-in' : '/console/', { 'set-cookie': clearedCookie });
    const form = new URLSearchParams(req.body.toString('utf8'));
    if (fromOtherSite(req) || !hasCsrfToken(req, session, form))
      return page(403, renderNotFound(session, this.signInRequired));
    this.sessions.delete(session.id);
    return redirect(this.signInRequired ? '/console/sign-in' : '/console/', { 'set-cookie': clearedCookie });
  }
}

function nextOf(query: string): string {
  return safeNext(new URLSearchParams(query).get('next'));
}

/**
 * Only a console path of this server: an open redirect to another site would help phishing.
 * It ends up in a Location header, so it is rebuilt by the URL parser (which resolves dot
 * segments and percent-encodes what a header cannot carry) and must come out as printable
 * ASCII; one with control characters (a header injection) is not repaired but dropped.
 */
function safeNext(next: string | null): string {
  const home = '/console/';
  if (!next?.startsWith('/console') || next.startsWith('//') || /[\x00-\x1f\x7f\\]/.test(next)) return home;
  let url: URL;
  try {
    url = new URL(next, 'http://console.invalid');
  } catch {
    return home;
  }
  const target = url.pathname + url.search;
  const ours =
    url.origin === 'http://console.invalid' && (url.pathname === '/console' || url.pathname.startsWith('/console/'));
  return ours && /^[\x21-\x7e]+$/.test(target) ? target : home;
}

function page(status: number, body: string, headers: Record<string, string> = {}): WireResponse {
  return { status, headers: { ...PAGE_HEADERS, ...headers }, body };
}

function redirect(location: string, headers: Record<string, string> = {}): WireResponse {
  return { status: 303, headers: { location, 'cache-control': 'no-store', ...headers }, body: '' };
}

function brokerJson(status: number, error: BrokerError): WireResponse {
  return { status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(error) };
}

function notFound(): WireResponse {
  return { status: 404, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: 'Not found' };
}

function methodNotAllowed(): WireResponse {
  return { status: 405, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: 'Method not allowed' };
}

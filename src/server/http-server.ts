import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Engine } from '../engine/engine.js';
import { Admission, admissionLimits, DEFAULT_BODY_BUDGET } from './admission.js';
import { BodyAbandoned, BodyRefused, MAX_REQUEST_BODY, readBody } from './request-body.js';
import { RequestGuard, type Area } from './request-guard.js';
import { send } from './respond.js';
import type { Cancellation } from '../engine/messages/long-poll.js';
import { hasAction } from '../engine/actions/registry.js';
import { SqsError, sqsError } from '../engine/errors.js';
import type { RequestContext } from '../engine/types.js';
import { handleJson, isJsonRequest, jsonError } from '../protocols/json/json-adapter.js';
import { handleQuery, queryError, wantsJson } from '../protocols/query/query-adapter.js';
import { callerAccount, withRetryAfter, type Credentials } from './auth/caller.js';
import { AuthThrottle } from '../protocols/auth-throttle.js';
import { ClientAddress } from './client-address.js';
import type { ManagementApi } from './management-api.js';
import { accessKeyOf, scopeRegionOf } from './auth/sigv4.js';
import { regionOfHost } from '../engine/queues/addressing.js';
import type { WireRequest, WireResponse } from '../protocols/wire.js';
import { headerText } from '../protocols/utf8.js';
import type { ManualClock } from '../engine/clock.js';
import type { ConsoleRoutes } from '../console/console-routes.js';
import { healthRoute, type Readiness } from './readiness.js';
import { browserLanding } from './landing.js';
import { logRequest, type RequestSeen } from './access-log.js';
import type { MetricsEndpoint } from '../metrics/metrics-endpoint.js';

export interface HttpOptions {
  host: string;
  port: number;
  accountId: string;
  region: string;
  log: Logger;
  /** Present only when the server runs on a manual clock (tests): enables /_redrive/clock. */
  manualClock?: ManualClock;
  /** Largest request body accepted; SQS's 1 MiB message limit plus encoding overhead. */
  maxBodyBytes?: number;
  /** Request bodies held in memory at once, all requests together (`--max-body-memory`). */
  bodyBudget?: number;
  /** `--allowed-hosts`: host names served besides IP addresses and localhost (request-guard.ts). */
  allowedHosts?: string[];
  /** When set, SQS requests must be SigV4-signed by one of these keys (see auth/caller.ts). */
  credentials?: Credentials;
  /** RabbitMQ's management API for policies, under /api/ (management-api.ts). */
  management?: ManagementApi;
  /** Counts each SQS request by access key once its caller is known (management/request-tally.ts). */
  requestTally?: { count(accountId: string, accessKey: string | undefined, client: string): void };
  /** The web console under /console; absent with `--console off` (everything there is a 404). */
  console?: ConsoleRoutes;
  /** Answers `GET /ready` (readiness.ts). */
  readiness: Readiness;
  /** GET /metrics (docs/monitoring.md); absent: a 404 like any unknown path. */
  metrics?: MetricsEndpoint;
  /** Failed authentication, shared with the console and the management API (auth-throttle.ts). */
  authThrottle?: AuthThrottle;
  /** `--trust-proxy`: the reverse proxies whose X-Forwarded-For names the client (client-address.ts). */
  trustProxy?: string[];
}

// A long poll waits up to 20 s, so sockets may stay quiet that long; anything slower is cut.
const REQUEST_TIMEOUT_MS = 30_000;
const HEADERS_TIMEOUT_MS = 10_000;
const SOCKET_IDLE_MS = 65_000;
const KEEP_ALIVE_MS = 60_000;

/**
 * The HTTP front: reads a request whole (bounded in size and time), picks the protocol
 * adapter from the request itself, and writes the adapter's answer. Plain node:http,
 * because SQS has one route and this path is the one every message takes.
 */
export class HttpServer {
  readonly server: Server;
  private active = 0;
  /** Load shedding at the door (see admission.ts). */
  private readonly admission: Admission;
  /** Host and cross-site checks (request-guard.ts). */
  private readonly guard: RequestGuard;
  private drained?: () => void;
  /** Whether each request gets an access log line (`debug`); the level is fixed at start. */
  private readonly accessLog: boolean;
  private readonly authThrottle: AuthThrottle;
  private readonly clientAddress: ClientAddress;

  constructor(
    private readonly engine: Engine,
    private readonly opts: HttpOptions,
  ) {
    this.admission = new Admission(admissionLimits(undefined, opts.bodyBudget ?? DEFAULT_BODY_BUDGET));
    this.guard = new RequestGuard({ credentials: opts.credentials !== undefined, allowedHosts: opts.allowedHosts ?? [] });
    this.server = createServer({ keepAlive: true, requestTimeout: REQUEST_TIMEOUT_MS, headersTimeout: HEADERS_TIMEOUT_MS }, (req, res) => {
      try {
        if (this.admission.refuse(req, res)) return;
      } catch (err) {
        opts.log.error({ err }, 'could not shed a request; closing its connection');
        res.destroy();
        return;
      }
      this.active++;
      this.handle(req, res).catch((err: unknown) => {
        opts.log.error({ err, method: req.method, url: req.url }, 'request handling failed; closing its connection');
        res.destroy();
      }).finally(() => {
        this.admission.done(req);
        if (--this.active === 0) this.drained?.();
      });
    });
    this.accessLog = opts.log.isLevelEnabled('debug');
    this.authThrottle = opts.authThrottle ?? new AuthThrottle();
    this.clientAddress = new ClientAddress(opts.trustProxy);
    this.server.keepAliveTimeout = KEEP_ALIVE_MS;
    this.server.timeout = SOCKET_IDLE_MS;
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.opts.port, this.opts.host, () => resolve());
    });
    const addr = this.server.address() as AddressInfo;
    const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
    return `http://${host}:${addr.port}`;
  }

  /** Stops accepting connections and waits for the requests in flight to finish. */
  async close(): Promise<void> {
    this.server.close();
    this.server.closeIdleConnections();
    if (this.active > 0) await new Promise<void>((resolve) => (this.drained = resolve));
    this.server.closeAllConnections();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const requestId = randomUUID();
    const started = this.accessLog ? performance.now() : 0;
    const seen: RequestSeen | undefined = this.accessLog ? { protocol: 'http' } : undefined;
    const [path, query = ''] = (req.url ?? '/').split('?', 2) as [string, string?];
    const wire: WireRequest = { method: req.method ?? 'GET', path, query, headers: req.headers, body: EMPTY };
    const area = areaOf(path, this.opts.management !== undefined);
    if (seen && area === 'console') seen.protocol = 'console';
    let response: WireResponse;
    const client = this.clientAddress.of(req.socket.remoteAddress, req.headers['x-forwarded-for']);
    try {
      const refusal = this.guard.check(area, req.headers);
      if (refusal) {
        this.opts.log.warn({ requestId, host: req.headers.host, origin: req.headers.origin, client }, refusal.message);
        response = refused(area, refusal.message, req, requestId);
        // Its body is not read: close the connection rather than read it to reuse it.
        response.headers.connection = 'close';
      } else {
        wire.body = await readBody(req, this.opts.maxBodyBytes ?? MAX_REQUEST_BODY, this.admission);
        response = area === 'console'
          ? await this.consoleRoute(wire, client, requestId)
          : area === 'api' ? await this.opts.management!.handle(wire, client)
          : await this.route(wire, requestId, new ClientGone(res, client), client, seen);
      }
    } catch (thrown) {
      // Nobody to answer (the body's bytes come back in `done` all the same).
      if (thrown instanceof BodyAbandoned || res.destroyed) return;
      const e = thrown instanceof BodyRefused ? thrown.error : thrown;
      // The body was not read, but the headers already say which protocol the client speaks.
      response = area === 'api' ? managementFailure(e) : req.headers['x-amz-target'] !== undefined ? jsonError(e) : queryError(e, requestId, wantsJson(req));
      // A body refused as it streamed in is dropped to its end (request-body.ts); after any
      // other failure it may be unread, and the connection cannot carry another request.
      if (!(thrown instanceof BodyRefused)) response.headers.connection = 'close';
    }
    if (response.error) this.opts.log.error({ err: response.error, requestId }, 'request failed');
    if (seen) logRequest(this.opts.log, wire, seen, response, requestId, started);
    send(res, response, requestId, this.opts.log);
  }

  private async route(req: WireRequest, requestId: string, signal: Cancellation, client: string, seen?: RequestSeen): Promise<WireResponse> {
    if (req.path === '/health' || req.path === '/ready') {
      const answer = await healthRoute(req.method, req.path, this.opts.readiness);
      if (answer) return answer;
    }
    if (req.path === '/metrics' && this.opts.metrics) return this.opts.metrics.onMainPort(req);
    const clockPath = req.path === '/_redrive/clock' && this.opts.manualClock !== undefined;
    // The manual clock (tests) moves for anyone in open mode, and only for a signed request
    // with --credentials, like any other change to the server's state.
    if (clockPath && !this.opts.credentials) return this.moveClock(req);
    const landing = browserLanding(req, this.opts.console !== undefined);
    if (landing) return landing;
    const json = req.method === 'POST' && isJsonRequest(req);
    const started = performance.now();
    let accountId: string;
    try {
      accountId = callerAccount(req, this.opts.credentials, this.opts.accountId, Date.now(), { throttle: this.authThrottle, client });
    } catch (e) {
      return this.refused(req, json, started, withRetryAfter(e, json ? jsonError(e) : queryError(e, requestId, wantsJson(req))));
    }
    this.opts.requestTally?.count(accountId, accessKeyOf(req), client);
    if (clockPath) return this.moveClock(req);
    const host = req.headers.host ?? `${this.opts.host}:${this.opts.port}`;
    const ctx: RequestContext = {
      accountId,
      // A signed request's region is the one it was signed for; else the host may name one.
      region: scopeRegionOf(req) ?? regionOfHost(host.toLowerCase()) ?? this.opts.region,
      baseUrl: `http://${host}`,
      requestId,
      traceHeader: typeof req.headers['x-amzn-trace-id'] === 'string' ? headerText(req.headers['x-amzn-trace-id']) : undefined,
    };
    if (seen) Object.assign(seen, { ctx, protocol: json ? 'json' : 'query' });
    const response = await (json ? handleJson(this.engine, ctx, req, signal) : handleQuery(this.engine, ctx, req, signal));
    // ctx.action is set once the request reaches its action, which counts it (dispatch).
    return ctx.action === undefined ? this.refused(req, json, started, response) : response;
  }

  /**
   * Counts a request refused before it reached an action (a bad signature, an unknown
   * action, a body that does not parse) in redrive_requests_total, as the actions count
   * theirs: an operator sees a client signing with the wrong key there too. The action
   * label is the one the request named if it exists, else `unknown`, so a client cannot
   * make up label values.
   */
  private refused(req: WireRequest, json: boolean, started: number, response: WireResponse): WireResponse {
    const code = response.headers['x-amzn-query-error']?.split(';')[0];
    if (code) {
      const named = json
        ? String(req.headers['x-amz-target'] ?? '').replace(/^AmazonSQS\./, '')
        : new URLSearchParams(req.query).get('Action') ?? new URLSearchParams(req.body.toString('utf8')).get('Action') ?? '';
      this.engine.observer.request(hasAction(named) ? named : 'unknown', json ? 'json' : 'query', code, (performance.now() - started) / 1000);
    }
    return response;
  }

  private consoleRoute(req: WireRequest, client: string, requestId: string): Promise<WireResponse> | WireResponse {
    if (this.opts.console) return this.opts.console.handle(req, client, requestId);
    return { status: 404, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: 'Not found' };
  }

  /** Test hook: `POST /_redrive/clock {"advanceMs": n}` moves the manual clock. */
  private moveClock(req: WireRequest): WireResponse {
    const clock = this.opts.manualClock!;
    if (req.method === 'POST') {
      let advanceMs: unknown;
      try {
        ({ advanceMs } = JSON.parse(req.body.toString('utf8') || '{}') as { advanceMs?: unknown });
      } catch {
        return { status: 400, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message: 'the body must be JSON: {"advanceMs": n}' }) };
      }
      if (typeof advanceMs === 'number' && advanceMs > 0) clock.advance(advanceMs);
    }
    return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ now: clock.now() }) };
  }
}

const EMPTY = Buffer.alloc(0);

function areaOf(path: string, management: boolean): Area {
  if (path === '/console' || path.startsWith('/console/')) return 'console';
  if (path.startsWith('/api/') && management) return 'api';
  return path === '/health' || path === '/ready' ? 'probe' : 'sqs';
}

/** A request-guard refusal in the shape of the part of the server it was sent to. */
function refused(area: Area, message: string, req: IncomingMessage, requestId: string): WireResponse {
  if (area === 'api') return { status: 403, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ error: 'not_authorized', reason: message }) };
  if (area === 'console') return { status: 403, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: message };
  const err = sqsError('AccessDenied', message);
  return req.headers['x-amz-target'] !== undefined ? jsonError(err) : queryError(err, requestId, wantsJson(req));
}

/** A failure under /api/ in RabbitMQ's shape: the client's own (a body too large) or ours. */
function managementFailure(e: unknown): WireResponse {
  const status = e instanceof SqsError ? e.status : 500;
  const reason = e instanceof SqsError ? e.message : 'Internal error';
  return { status, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ error: status >= 500 ? 'internal_server_error' : 'bad_request', reason }), error: e instanceof SqsError ? undefined : e };
}

/**
 * Tells a long poll that its client went away. It listens for the response's `close`
 * only when a poll actually waits: an AbortController and a listener on every request
 * were a measurable share of a plain send.
 */
class ClientGone implements Cancellation {
  private listeners?: Set<() => void>;

  constructor(private readonly res: ServerResponse, readonly client?: string) {}

  get aborted(): boolean {
    return this.res.destroyed && !this.res.writableFinished;
  }

  addEventListener(_type: 'abort', listener: () => void): void {
    if (!this.listeners) {
      this.listeners = new Set();
      this.res.once('close', () => {
        if (this.res.writableFinished) return;
        for (const l of [...this.listeners!]) l();
      });
    }
    this.listeners.add(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    this.listeners?.delete(listener);
  }
}

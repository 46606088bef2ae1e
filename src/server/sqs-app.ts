import type { Engine } from '../engine/engine.js';
import { hasAction } from '../engine/actions/registry.js';
import type { ManualClock } from '../engine/kernel/clock.js';
import type { EngineObserver } from '../engine/context/observer.js';
import { engineDispatch, type Dispatch } from '../protocols/dispatch.js';
import { regionOfHost } from '../engine/kernel/addressing.js';
import type { RequestContext } from '../engine/kernel/types.js';
import { AuthThrottle } from '../auth/throttle.js';
import { handleJson, isJsonRequest, jsonError } from '../protocols/json/json-adapter.js';
import { handleQuery, queryError, wantsJson } from '../protocols/query/query-adapter.js';
import { headerText } from '../protocols/utf8.js';
import type { WireRequest, WireResponse } from '../protocols/wire.js';
import { callerAccount, claimOf, withRetryAfter, type SignedClaim } from '../auth/caller.js';
import type { Credentials } from '../auth/credentials.js';
import { accessKeyOf, scopeRegionOf } from '../auth/sigv4.js';
import { sqsErrors, type Exchange, type SubApp } from './mount.js';

export interface SqsOptions {
  /** The account of an unsigned request (auth/caller.ts). */
  accountId: string;
  /** The region of a request that names none. */
  region: string;
  /** The address the server listens on: queue URLs name it when a request has no Host header. */
  host: string;
  port: number;
  /** When set, every request must be SigV4-signed by one of these keys (auth/caller.ts). */
  credentials?: Credentials;
  /** Failed signatures, shared with the other interfaces that check the same secrets. */
  authThrottle?: AuthThrottle;
  /** Present only when the server runs on a manual clock (tests): enables /_redrive/clock. */
  manualClock?: ManualClock;
  /** Counts each request by access key once its caller is known (management/request-tally.ts). */
  requestTally?: { count(accountId: string, accessKey: string | undefined, client: string): void };
}

/**
 * What the SQS API needs of the engine: its dispatch, the count of requests refused before
 * an action, and the release of waiting long polls at shutdown. In one thread, the engine
 * itself (`engineBackend`); on an HTTP thread of `--threads N`, the link to the owner
 * thread (src/server/threads/owner-link.ts).
 */
export interface SqsBackend {
  run: Dispatch;
  observer: Pick<EngineObserver, 'request'>;
  releaseLongPolls(): void;
  /** With --credentials: checks the secret elsewhere (the owner thread); absent, it is checked here. */
  checkSecret?(claim: SignedClaim, client: string): Promise<string>;
}

export function engineBackend(engine: Engine): SqsBackend {
  return {
    run: engineDispatch(engine),
    observer: engine.observer,
    releaseLongPolls: () => engine.longPolls.releaseAll(),
  };
}

interface HostFacts {
  host: string;
  region: string | undefined;
  baseUrl: string;
}

/**
 * The SQS API, both protocols, on every path no other sub-application serves: resolves the
 * caller (SigV4 with --credentials) and the region, hands the request to the JSON or the
 * Query adapter, and counts the requests refused before they reached an action.
 */
export class SqsApp implements SubApp {
  readonly name = 'sqs';
  readonly area = 'sqs';
  readonly logAs = 'http';
  readonly errors = sqsErrors;
  private readonly authThrottle: AuthThrottle;

  constructor(
    private readonly backend: SqsBackend,
    private readonly opts: SqsOptions,
  ) {
    this.authThrottle = opts.authThrottle ?? new AuthThrottle();
  }

  matches(): boolean {
    return true;
  }

  /** Waiting long polls are answered at once, with what there is, so that the front drains. */
  close(): void {
    this.backend.releaseLongPolls();
  }

  /** A plain function returning the adapter's promise with one reaction: an async frame per request costs more. */
  handle(req: WireRequest, x: Exchange): Promise<WireResponse> | WireResponse {
    const clockPath = req.path === '/_redrive/clock' && this.opts.manualClock !== undefined;
    // The manual clock (tests) moves for anyone in open mode, and only for a signed request
    // with --credentials, like any other change to the server's state.
    if (clockPath && !this.opts.credentials) return this.moveClock(req);
    const json = req.method === 'POST' && isJsonRequest(req);
    const started = performance.now();
    if (this.opts.credentials && this.backend.checkSecret) {
      // An HTTP thread checks everything but the secret; the owner checks that under the
      // one throttle every thread shares (threads/http-threads.ts).
      let claim: SignedClaim;
      try {
        claim = claimOf(req, Date.now());
      } catch (e) {
        return this.refuse(e, req, x, json, started);
      }
      return this.backend.checkSecret(claim, x.client).then(
        (accountId) => this.serve(req, x, json, started, clockPath, accountId),
        (e: unknown) => this.refuse(e, req, x, json, started),
      );
    }
    let accountId: string;
    try {
      // The throttle's guard matters only with credentials (open mode checks no secret).
      const guard = this.opts.credentials ? { throttle: this.authThrottle, client: x.client } : undefined;
      accountId = callerAccount(req, this.opts.credentials, this.opts.accountId, Date.now(), guard);
    } catch (e) {
      return this.refuse(e, req, x, json, started);
    }
    return this.serve(req, x, json, started, clockPath, accountId);
  }

  private refuse(e: unknown, req: WireRequest, x: Exchange, json: boolean, started: number): WireResponse {
    return this.refused(
      req,
      json,
      started,
      withRetryAfter(e, json ? jsonError(e) : queryError(e, x.requestId, wantsJson(req))),
    );
  }

  /** The request of a known caller: to its adapter. */
  private serve(
    req: WireRequest,
    x: Exchange,
    json: boolean,
    started: number,
    clockPath: boolean,
    accountId: string,
  ): Promise<WireResponse> | WireResponse {
    this.opts.requestTally?.count(accountId, accessKeyOf(req), x.client);
    if (clockPath) return this.moveClock(req);
    const host = this.hostOf(req.headers.host ?? `${this.opts.host}:${this.opts.port}`);
    const ctx: RequestContext = {
      accountId,
      // A signed request's region is the one it was signed for; else the host may name one.
      region: scopeRegionOf(req) ?? host.region ?? this.opts.region,
      baseUrl: host.baseUrl,
      requestId: x.requestId,
      traceHeader:
        typeof req.headers['x-amzn-trace-id'] === 'string' ? headerText(req.headers['x-amzn-trace-id']) : undefined,
      // Set later (dispatch, the adapter); named now so that the object keeps one shape and
      // its fields in place, instead of growing a property store per request.
      action: undefined,
      input: undefined,
      protocol: undefined,
    };
    if (x.seen) Object.assign(x.seen, { ctx, protocol: json ? 'json' : 'query' });
    const response = json
      ? handleJson(this.backend.run, ctx, req, x.cancelled)
      : handleQuery(this.backend.run, ctx, req, x.cancelled);
    // ctx.action is set once the request reaches its action, which counts it (dispatch).
    return response.then((r) => (ctx.action === undefined ? this.refused(req, json, started, r) : r));
  }

  /**
   * What a Host header says: the region it names and the base of queue URLs. A client
   * sends the same Host with every request, so the last one's is kept.
   */
  private hostOf(host: string): HostFacts {
    let facts = this.lastHost;
    if (facts?.host !== host) {
      facts = { host, region: regionOfHost(host.toLowerCase()), baseUrl: `http://${host}` };
      this.lastHost = facts;
    }
    return facts;
  }

  private lastHost?: HostFacts;

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
        : (new URLSearchParams(req.query).get('Action') ??
          new URLSearchParams(req.body.toString('utf8')).get('Action') ??
          '');
      this.backend.observer.request(
        hasAction(named) ? named : 'unknown',
        json ? 'json' : 'query',
        code,
        (performance.now() - started) / 1000,
      );
    }
    return response;
  }

  /** Test hook: `POST /_redrive/clock {"advanceMs": n}` moves the manual clock. */
  private moveClock(req: WireRequest): WireResponse {
    const clock = this.opts.manualClock!;
    if (req.method === 'POST') {
      let advanceMs: unknown;
      try {
        ({ advanceMs } = JSON.parse(req.body.toString('utf8') || '{}') as { advanceMs?: unknown });
      } catch {
        return {
          status: 400,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ message: 'the body must be JSON: {"advanceMs": n}' }),
        };
      }
      if (typeof advanceMs === 'number' && advanceMs > 0) clock.advance(advanceMs);
    }
    return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ now: clock.now() }) };
  }
}

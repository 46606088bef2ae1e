import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Cancellation } from '../engine/messages/long-poll.js';
import type { WireRequest, WireResponse } from '../protocols/wire.js';
import { logRequest, type RequestSeen } from './access-log.js';
import { Admission, admissionLimits, DEFAULT_BODY_BUDGET, type ClientLimits, type Ticket } from './admission.js';
import { ClientAddress } from './client-address.js';
import type { SubApp } from './mount.js';
import { mountOf } from './mount-table.js';
import { BodyAbandoned, BodyRefused, MAX_REQUEST_BODY, readBody } from './request-body.js';
import { RequestGuard, type GuardOptions } from './request-guard.js';
import { send } from './respond.js';

export interface HttpOptions {
  host: string;
  port: number;
  log: Logger;
  /** The sub-applications, the first that matches a request serving it (mount-table.ts). */
  mounts: SubApp[];
  /** The Host and cross-site checks (request-guard.ts). */
  guard: GuardOptions;
  /** Largest request body accepted; SQS's 1 MiB message limit plus encoding overhead. */
  maxBodyBytes?: number;
  /** Request bodies held in memory at once, all requests together (`--max-body-memory`). */
  bodyBudget?: number;
  /** `--trust-proxy`: the reverse proxies whose X-Forwarded-For names the client (client-address.ts). */
  trustProxy?: string[];
  /** What one client address may hold before its requests are whole (admission.ts); defaults for those not given. */
  clientLimits?: ClientLimits;
  /** Listen on this descriptor of a bound socket instead of binding `host:port` (an HTTP thread, threads/listen-fd.ts). */
  fd?: number;
  /** HTTP threads that share the process's limits (`--threads`); 1 when absent. */
  threads?: number;
}

// A long poll waits up to 20 s, so sockets may stay quiet that long; anything slower is cut.
const REQUEST_TIMEOUT_MS = 30_000;
const HEADERS_TIMEOUT_MS = 10_000;
const SOCKET_IDLE_MS = 65_000;
const KEEP_ALIVE_MS = 60_000;

/**
 * The HTTP front: what every request goes through whichever sub-application serves it.
 * It sheds load at the door (admission.ts), picks the sub-application from the mount
 * table, applies the request guard with that sub-application's rules, reads the body
 * whole (bounded in size, time and memory), and writes the answer with the writer that
 * never throws (respond.ts), logging each request when the access log is on. Plain
 * node:http, because the path every message takes is this one.
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
  private readonly clientAddress: ClientAddress;

  constructor(private readonly opts: HttpOptions) {
    this.clientAddress = new ClientAddress(opts.trustProxy);
    this.admission = new Admission(
      admissionLimits(undefined, opts.bodyBudget ?? DEFAULT_BODY_BUDGET, opts.clientLimits, opts.threads),
      (peer) => this.clientAddress.isProxy(peer),
    );
    this.guard = new RequestGuard(opts.guard);
    this.server = createServer(
      { keepAlive: true, requestTimeout: REQUEST_TIMEOUT_MS, headersTimeout: HEADERS_TIMEOUT_MS },
      (req, res) => {
        let ticket: Ticket | undefined;
        let client: string;
        try {
          client = this.clientAddress.of(req.socket.remoteAddress, req.headers['x-forwarded-for']);
          ticket = this.admission.admit(req, res, client);
          if (!ticket) return;
        } catch (err) {
          opts.log.error({ err }, 'could not shed a request; closing its connection');
          res.destroy();
          return;
        }
        const admitted = ticket;
        this.active++;
        // One reaction for both outcomes (a .catch and a .finally were two more promises a request).
        this.handle(req, res, client, admitted).then(
          () => this.finished(admitted),
          (err: unknown) => {
            try {
              opts.log.error(
                { err, method: req.method, url: req.url },
                'request handling failed; closing its connection',
              );
              res.destroy();
            } finally {
              this.finished(admitted);
            }
          },
        );
      },
    );
    // Connections past their address's share are closed before they can hold anything.
    this.server.on('connection', (socket) => this.admission.connected(socket));
    this.accessLog = opts.log.isLevelEnabled('debug');
    this.server.keepAliveTimeout = KEEP_ALIVE_MS;
    this.server.timeout = SOCKET_IDLE_MS;
  }

  /** The request admitted at the door is over: its budget comes back, and a drain may end. */
  private finished(ticket: Ticket): void {
    this.admission.done(ticket);
    if (--this.active === 0) this.drained?.();
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      if (this.opts.fd !== undefined) this.server.listen({ fd: this.opts.fd }, () => resolve());
      else this.server.listen(this.opts.port, this.opts.host, () => resolve());
    });
    const addr = this.server.address() as AddressInfo;
    const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
    return `http://${host}:${addr.port}`;
  }

  /**
   * Stops accepting connections, tells each sub-application to end what keeps requests
   * waiting, lets the requests in flight finish for up to `drainMs`, and cuts the rest:
   * their writes are committed or not, as with a crash.
   */
  async close(drainMs: number): Promise<void> {
    this.server.close();
    this.server.closeIdleConnections();
    for (const app of this.opts.mounts) app.close?.();
    if (this.active > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        new Promise<void>((resolve) => (this.drained = resolve)),
        new Promise<void>((resolve) => (timer = setTimeout(resolve, drainMs))),
      ]);
      clearTimeout(timer);
    }
    this.server.closeAllConnections();
  }

  private async handle(req: IncomingMessage, res: ServerResponse, client: string, ticket: Ticket): Promise<void> {
    const requestId = randomUUID();
    const started = this.accessLog ? performance.now() : 0;
    const [path, query = ''] = (req.url ?? '/').split('?', 2) as [string, string?];
    const wire: WireRequest = { method: req.method ?? 'GET', path, query, headers: req.headers, body: EMPTY };
    const app = mountOf(this.opts.mounts, wire);
    const seen: RequestSeen | undefined = this.accessLog ? { protocol: app.logAs } : undefined;
    let response: WireResponse;
    let cut = false;
    try {
      const refusal = this.guard.check(app.area, req.headers);
      if (refusal) {
        this.opts.log.warn({ requestId, host: req.headers.host, origin: req.headers.origin, client }, refusal.message);
        response = app.errors.refusal(refusal.message, wire, requestId);
        // Its body is not read: close the connection rather than read it to reuse it.
        response.headers.connection = 'close';
      } else {
        wire.body = await readBody(req, this.opts.maxBodyBytes ?? MAX_REQUEST_BODY, this.admission, ticket);
        // Whole: from here it is authenticated (or refused) at once, and leaves its address's share.
        this.admission.bodyRead(ticket);
        response = await app.handle(wire, { requestId, client, cancelled: new ClientGone(res, client), seen });
      }
    } catch (thrown) {
      // Nobody to answer (the body's bytes come back in `done` all the same).
      if (thrown instanceof BodyAbandoned || res.destroyed) return;
      // The body may be unread, but the headers already say which shape the client expects.
      response = app.errors.failure(thrown instanceof BodyRefused ? thrown.error : thrown, wire, requestId);
      // A body refused as it streamed in is dropped to its end (request-body.ts); after any
      // other failure it may be unread, and the connection cannot carry another request.
      cut = thrown instanceof BodyRefused && thrown.cut;
      if (!(thrown instanceof BodyRefused) || cut) response.headers.connection = 'close';
    }
    if (response.error) this.opts.log.error({ err: response.error, requestId }, 'request failed');
    if (seen) logRequest(this.opts.log, wire, seen, response, requestId, started);
    send(res, response, requestId, this.opts.log);
    // A body refused for its pieces' overhead is not read on (request-body.ts): once the
    // answer is out the connection goes, before node:http resumes reading to drain it.
    if (cut) res.once('finish', () => req.socket.destroy());
  }
}

const EMPTY = Buffer.alloc(0);

/**
 * Tells a long poll that its client went away. It listens for the response's `close`
 * only when a poll actually waits: an AbortController and a listener on every request
 * were a measurable share of a plain send.
 */
class ClientGone implements Cancellation {
  private listeners?: Set<() => void>;

  /** `client`: the caller's address, which the console shows beside a waiting long poll. */
  constructor(
    private readonly res: ServerResponse,
    readonly client?: string,
  ) {}

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

import { timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { retryAfterSeconds, type AuthThrottle } from '../auth/throttle.js';
import type { WireRequest, WireResponse } from '../protocols/wire.js';
import type { ServerMetrics } from './metrics.js';

export interface MetricsAccess {
  /** Scrapes must send `Authorization: Bearer <token>`. */
  token?: string;
  /** `/metrics` is served on its own listener (`--metrics-address`), not on the main port. */
  address?: { host: string; port: number };
  /** The server checks SigV4 (`--credentials`): an open `/metrics` on the main port would bypass it. */
  credentials: boolean;
  /** The server's throttle of failed authentication: a wrong token counts as a failed guess from its address. */
  throttle?: AuthThrottle;
}

const text = (status: number, body: string, headers: Record<string, string> = {}): WireResponse => ({
  status,
  headers: { 'content-type': 'text/plain; charset=utf-8', ...headers },
  body,
});

/** Reads the token file of `--metrics-token-file`: its content, without the line end. */
export function readMetricsToken(path: string): string {
  let token: string;
  try {
    token = readFileSync(path, 'utf8').trim();
  } catch (e) {
    throw new Error(
      `--metrics-token-file ${path}: ${(e as Error).message}; give a readable file holding the bearer token`,
    );
  }
  if (!token) throw new Error(`--metrics-token-file ${path}: the file is empty; write the bearer token in it`);
  return token;
}

/** `host:port` of `--metrics-address`, or a clear error. */
export function parseMetricsAddress(value: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(value);
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) throw new Error(`--metrics-address "${value}": give host:port, e.g. 127.0.0.1:9325`);
  return { host: (m[1] ?? m[2])!, port };
}

/**
 * `GET /metrics` with the access rules of docs/monitoring.md: open when the server has no
 * credentials; with `--credentials`, only with the bearer token or on a separate address.
 */
export class MetricsEndpoint {
  private readonly token?: Buffer;

  constructor(
    private readonly metrics: ServerMetrics,
    private readonly access: MetricsAccess,
  ) {
    if (access.token) this.token = Buffer.from(access.token);
  }

  /** The answer on the main port, to a client at `client` (client-address.ts). */
  onMainPort(req: WireRequest, client: string): Promise<WireResponse> | WireResponse {
    if (this.access.address)
      return text(404, 'Not found: metrics are served on the address given by --metrics-address.\n');
    if (this.access.credentials && !this.token) {
      return text(
        403,
        'Metrics are closed: this server checks --credentials; start it with --metrics-token-file or --metrics-address (docs/monitoring.md).\n',
      );
    }
    return this.handle(req, client);
  }

  async handle(req: WireRequest, client: string): Promise<WireResponse> {
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return text(405, 'Method not allowed: use GET.\n', { allow: 'GET, HEAD' });
    if (this.token) {
      const refused = this.checkToken(req.headers.authorization, client);
      if (refused) return refused;
    }
    const body = await this.metrics.scrape();
    return {
      status: 200,
      headers: { 'content-type': this.metrics.contentType },
      body: req.method === 'HEAD' ? '' : body,
    };
  }

  /**
   * The bearer token is a secret like the others: a wrong one counts as a failed guess in
   * the server's one throttle (by address: a token has no key id), and while the address
   * must wait, its scrapes are refused without a check, as every interface does.
   */
  private checkToken(header: string | undefined, client: string): WireResponse | undefined {
    const wait = this.access.throttle?.wait(client, undefined) ?? 0;
    if (wait > 0) {
      const seconds = retryAfterSeconds(wait);
      return text(429, `Too many failed authentication attempts; retry after ${seconds} seconds.\n`, {
        'retry-after': String(seconds),
      });
    }
    if (this.authorized(header)) return undefined;
    this.access.throttle?.failed(client, undefined);
    return text(401, 'Unauthorized: send the token of --metrics-token-file as "Authorization: Bearer <token>".\n', {
      'www-authenticate': 'Bearer',
    });
  }

  private authorized(header: string | undefined): boolean {
    const m = header ? /^Bearer\s+(.+)$/i.exec(header) : null;
    if (!m) return false;
    const given = Buffer.from(m[1]!.trim());
    return given.length === this.token!.length && timingSafeEqual(given, this.token!);
  }

  /**
   * The listener of `--metrics-address`, serving `/metrics` alone. `refuse` is the main
   * port's request guard for its `/metrics` (the Host and cross-site checks,
   * server/request-guard.ts): a web page that rebinds its name to this address must not
   * read the queue names in the metrics here either.
   */
  async listen(
    refuse: (headers: IncomingHttpHeaders) => string | undefined,
  ): Promise<{ url: string; close(): Promise<void> }> {
    const { host, port } = this.access.address!;
    const server: Server = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      const refusal = refuse(req.headers);
      const answer = refusal
        ? Promise.resolve(text(403, `${refusal}\n`))
        : path === '/metrics'
          ? this.handle(
              { method: req.method ?? 'GET', path, query: '', headers: req.headers, body: Buffer.alloc(0) },
              req.socket.remoteAddress ?? '',
            )
          : Promise.resolve(text(404, 'Not found: only /metrics is served here.\n'));
      answer.then(
        (r) => res.writeHead(r.status, r.headers).end(r.body),
        () => res.writeHead(500).end(),
      );
      req.resume();
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    const addr = server.address() as AddressInfo;
    return {
      url: `http://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}/metrics`,
      close: () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
    };
  }
}

import { parsePolicyBody, policyView, type RuntimePolicies } from '../engine/amqp/policies.js';
import { PolicyError } from '../engine/policies/server-policies.js';
import { authenticator } from '../auth/password.js';
import { AuthThrottle, retryAfterSeconds } from '../auth/throttle.js';
import type { WireRequest, WireResponse } from '../protocols/wire.js';
import type { Credentials } from '../auth/credentials.js';
import type { BrokerApi } from './management/broker-api.js';

/**
 * The part of RabbitMQ's management HTTP API that RabbitMQ users script policies with,
 * on the main port under /api/: GET /api/policies and /api/policies/%2F, and GET, PUT and
 * DELETE /api/policies/%2F/<name>. Basic auth signs in as the AMQP listener does
 * (guest/guest from loopback, or an access key and its secret with --credentials), and
 * the policies are those of the caller's account, its virtual host `/`.
 */
export class ManagementApi {
  private readonly authenticate;
  private readonly throttle: AuthThrottle;
  /** Connections, channels, consumers, exchanges, bindings, queues (management/broker-api.ts). */
  private readonly broker?: BrokerApi;

  constructor(
    private readonly policies: RuntimePolicies,
    opts: { accountId: string; credentials?: Credentials; throttle?: AuthThrottle; broker?: BrokerApi },
  ) {
    this.broker = opts.broker;
    this.authenticate = authenticator(opts);
    this.throttle = opts.throttle ?? new AuthThrottle();
  }

  async handle(req: WireRequest, { client }: { client: string }): Promise<WireResponse> {
    const account = this.signIn(req, client);
    if (typeof account === 'number') {
      const seconds = retryAfterSeconds(account);
      return {
        ...json(429, { error: 'too_many_requests', reason: `Too many failed logins; retry after ${seconds} seconds` }),
        headers: { 'content-type': 'application/json', 'retry-after': String(seconds) },
      };
    }
    if (account === undefined) {
      return {
        ...json(401, { error: 'not_authorized', reason: 'Login failed' }),
        headers: { 'content-type': 'application/json', 'www-authenticate': 'Basic realm="RabbitMQ Management"' },
      };
    }
    const parts = decodeSegments(req.path.split('/').slice(2));
    if (!parts) return json(400, { error: 'bad_request', reason: 'invalid percent-encoding in the path' });
    if (parts[0] !== 'policies') {
      const who = { by: 'management API', client };
      return (
        (await this.broker?.handle({
          method: req.method,
          parts,
          query: req.query,
          headers: req.headers,
          account,
          who,
        })) ?? notFound()
      );
    }
    if (parts.length > 3) return notFound();
    if (parts.length >= 2 && parts[1] !== '/') return json(404, { error: 'Object Not Found', reason: 'Not Found' });
    if (parts.length < 3) {
      return req.method === 'GET' ? json(200, this.policies.list(account).map(policyView)) : methodNotAllowed();
    }
    const name = parts[2]!;
    switch (req.method) {
      case 'GET': {
        const p = this.policies.list(account).find((x) => x.name === name);
        return p ? json(200, policyView(p)) : notFound();
      }
      case 'PUT': {
        let body: unknown;
        try {
          body = JSON.parse(req.body.toString('utf8'));
        } catch {
          return json(400, { error: 'bad_request', reason: 'not_json' });
        }
        try {
          const replaced = await this.policies.put(parsePolicyBody(account, name, body));
          return { status: replaced ? 204 : 201, headers: {}, body: '' };
        } catch (e) {
          if (e instanceof PolicyError) return json(400, { error: 'bad_request', reason: e.message });
          throw e;
        }
      }
      case 'DELETE':
        return (await this.policies.delete(account, name)) ? { status: 204, headers: {}, body: '' } : notFound();
      default:
        return methodNotAllowed();
    }
  }

  /** The caller's account; undefined when the login fails; a number of milliseconds to wait when throttled. */
  private signIn(req: WireRequest, client: string): string | number | undefined {
    const auth = req.headers.authorization;
    if (typeof auth !== 'string' || !auth.startsWith('Basic ')) return undefined;
    const text = Buffer.from(auth.slice(6), 'base64').toString('utf8');
    const colon = text.indexOf(':');
    if (colon < 0) return undefined;
    const user = text.slice(0, colon);
    // Checked, counted and answered in this turn: parallel guesses queue up in the throttle.
    const wait = this.throttle.wait(client, user);
    if (wait > 0) return wait;
    const account = this.authenticate(user, text.slice(colon + 1), client);
    if (account === undefined) this.throttle.failed(client, user);
    else this.throttle.succeeded(client, user);
    return account;
  }
}

/** A path's segments decoded, or undefined when one is not valid percent-encoded UTF-8. */
function decodeSegments(segments: string[]): string[] | undefined {
  try {
    return segments.map((p) => decodeURIComponent(p));
  } catch {
    return undefined;
  }
}

const json = (status: number, value: unknown): WireResponse => ({
  status,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(value),
});
const notFound = () => json(404, { error: 'Object Not Found', reason: 'Not Found' });
const methodNotAllowed = () => json(405, { error: 'Method Not Allowed', reason: 'Method Not Allowed' });

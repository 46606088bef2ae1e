import type { WireRequest, WireResponse } from '../protocols/wire.js';
import { fromOtherSite, hasCsrfToken } from './csrf.js';
import type { Session } from './sessions.js';

/**
 * What the console needs of the management API's broker views, which the server wires in
 * (src/server/management/broker-api.ts implements it): declared here so that the console
 * does not import the server.
 */
export interface BrokerViews {
  handle(r: {
    method: string;
    parts: string[];
    query: string;
    headers: Record<string, string | string[] | undefined>;
    account: string;
    who: Record<string, unknown>;
  }): Promise<WireResponse | undefined>;
}

/** Where the console's pages read the management API's broker views. */
export const BROKER_API_PREFIX = '/console/api/rabbitmq/';

/**
 * `/console/api/rabbitmq/<path>`: the management API's broker views and connection close
 * (src/server/management/broker-api.ts) as the session's account, for the Connections and
 * Exchanges pages and a queue's consumers. The console is a client of the same API, with
 * its session in place of basic auth; every request must carry the session's CSRF token.
 */
export async function brokerRoute(
  api: BrokerViews | undefined,
  req: WireRequest,
  session: Session | undefined,
  client: string,
): Promise<WireResponse> {
  if (!session) return json(401, { error: 'not_authorized', reason: 'Sign in to the console first.' });
  if (fromOtherSite(req) || !hasCsrfToken(req, session)) {
    return json(403, {
      error: 'not_authorized',
      reason: 'The console refused a request that did not come from its own pages.',
    });
  }
  let parts: string[];
  try {
    parts = req.path
      .slice(BROKER_API_PREFIX.length)
      .split('/')
      .map((p) => decodeURIComponent(p));
  } catch {
    return json(400, { error: 'bad_request', reason: 'invalid percent-encoding in the path' });
  }
  const who = { by: 'console', accessKey: session.accessKeyId, client };
  const answer = await api?.handle({
    method: req.method,
    parts,
    query: req.query,
    headers: req.headers,
    account: session.accountId,
    who,
  });
  return answer ?? json(404, { error: 'Object Not Found', reason: 'Not Found' });
}

const json = (status: number, value: unknown): WireResponse => ({
  status,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(value),
});

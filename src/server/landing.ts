import type { WireRequest, WireResponse } from '../protocols/wire.js';

/**
 * A person who opens the server's root in a browser: a GET of `/` with no parameters that
 * asks for HTML. SDKs never send that (they POST, or GET with an Action), so their requests
 * go to the SQS API.
 */
export function isBrowserLanding(req: WireRequest): boolean {
  if (req.method !== 'GET' || req.path !== '/' || req.query !== '') return false;
  const accept = req.headers.accept;
  return typeof accept === 'string' && /(^|,)\s*text\/html\s*(;|,|$)/i.test(accept);
}

/** The browser goes to the console, or is told it is off. */
export function browserLanding(consoleOn: boolean): WireResponse {
  if (consoleOn)
    return {
      status: 302,
      headers: { location: '/console/', 'content-type': 'text/plain; charset=utf-8' },
      body: 'The console is at /console/.\n',
    };
  return {
    status: 200,
    headers: { 'content-type': 'text/html; charset=utf-8' },
    body:
      '<!doctype html><meta charset="utf-8"><title>Redrive</title>' +
      '<p>This is a Redrive server: an SQS endpoint for SDKs and the AWS CLI (<code>--endpoint-url</code> this address).</p>' +
      '<p>The web console is off on this server; start it with <code>--console on</code> to browse queues at <code>/console/</code>.</p>\n',
  };
}

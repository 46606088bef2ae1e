import type { WireRequest, WireResponse } from '../protocols/wire.js';

/**
 * A person who opens the server's root in a browser: a GET of `/` with no parameters that
 * asks for HTML. SDKs never send that (they POST, or GET with an Action), so their answer
 * is SQS's as before; the browser goes to the console, or is told it is off.
 */
export function browserLanding(req: WireRequest, consoleOn: boolean): WireResponse | undefined {
  if (req.method !== 'GET' || req.path !== '/' || req.query !== '') return undefined;
  const accept = req.headers.accept;
  if (typeof accept !== 'string' || !/(^|,)\s*text\/html\s*(;|,|$)/i.test(accept)) return undefined;
  if (consoleOn) return { status: 302, headers: { location: '/console/', 'content-type': 'text/plain; charset=utf-8' }, body: 'The console is at /console/.\n' };
  return {
    status: 200,
    headers: { 'content-type': 'text/html; charset=utf-8' },
    body: '<!doctype html><meta charset="utf-8"><title>Redrive</title>'
      + '<p>This is a Redrive server: an SQS endpoint for SDKs and the AWS CLI (<code>--endpoint-url</code> this address).</p>'
      + '<p>The web console is off on this server; start it with <code>--console on</code> to browse queues at <code>/console/</code>.</p>\n',
  };
}

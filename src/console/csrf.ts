import type { WireRequest } from '../protocols/wire.js';
import type { Session } from '../auth/console-sessions.js';
import { sameSecret } from '../auth/password.js';

/**
 * Every POST to the console must come from the console's own pages. Two independent
 * checks: the browser's own word on where the request comes from (Sec-Fetch-Site and
 * Origin, which a page on another site cannot forge), and the session's CSRF token,
 * which only the console's pages can read (it is in the page, not in a cookie).
 */
export function fromOtherSite(req: WireRequest): boolean {
  const site = req.headers['sec-fetch-site'];
  if (typeof site === 'string' && site !== 'same-origin') return true;
  const origin = req.headers.origin;
  if (typeof origin !== 'string') return false;
  const host = req.headers.host;
  return !host || (origin !== `http://${host}` && origin !== `https://${host}`);
}

export function hasCsrfToken(req: WireRequest, session: Session, form?: URLSearchParams): boolean {
  const sent = req.headers['x-redrive-csrf'] ?? form?.get('csrf');
  return typeof sent === 'string' && sameSecret(sent, session.csrfToken);
}

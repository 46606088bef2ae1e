import { escapeHtml as e } from './html.js';
import type { Session } from '../auth/console-sessions.js';

/** The console's pages, one URL each. Data is filled in by the page's script from API calls. */
export type PageKind =
  | 'overview'
  | 'create'
  | 'queue'
  | 'messages'
  | 'message'
  | 'redrive'
  | 'connections'
  | 'exchanges';

export interface PageRoute {
  kind: PageKind;
  queue?: string;
  messageId?: string;
}

const QUEUE_NAME = /^[A-Za-z0-9_-]{1,80}(\.fifo)?$/;

/** Maps a path under /console to a page, or undefined for a 404. */
export function pageRoute(path: string): PageRoute | undefined {
  if (path === '/console' || path === '/console/' || path === '/console/queues') return { kind: 'overview' };
  if (path === '/console/create-queue') return { kind: 'create' };
  if (path === '/console/connections' || path === '/console/exchanges')
    return { kind: path.slice(9) as 'connections' | 'exchanges' };
  const m = /^\/console\/queues\/([^/]+)(?:\/(messages|redrive)(?:\/([^/]+))?)?$/.exec(path);
  if (!m) return undefined;
  let queue: string;
  let messageId: string | undefined;
  try {
    queue = decodeURIComponent(m[1]!);
    messageId = m[3] === undefined ? undefined : decodeURIComponent(m[3]);
  } catch {
    return undefined;
  }
  if (!QUEUE_NAME.test(queue)) return undefined;
  if (messageId !== undefined)
    return m[2] === 'messages' && messageId.length <= 128 ? { kind: 'message', queue, messageId } : undefined;
  return { kind: (m[2] as 'messages' | 'redrive' | undefined) ?? 'queue', queue };
}

const TITLES: Record<PageKind, string> = {
  overview: 'Queues',
  create: 'Create queue',
  queue: 'Queue',
  messages: 'Messages',
  message: 'Message',
  redrive: 'Redrive',
  connections: 'Connections',
  exchanges: 'Exchanges',
};

export function renderPage(route: PageRoute, session: Session, signInRequired: boolean): string {
  const q = route.queue;
  const title = q
    ? `${route.kind === 'message' ? `Message ${route.messageId} · ` : route.kind === 'queue' ? '' : `${TITLES[route.kind]} · `}${q}`
    : TITLES[route.kind];
  const data = [
    `data-page="${route.kind}"`,
    q ? `data-queue="${e(q)}"` : '',
    route.messageId ? `data-message-id="${e(route.messageId)}"` : '',
  ].join(' ');
  return layout(
    title,
    session,
    signInRequired,
    `
  <main id="main" ${data}>
    ${crumbs(route)}
    ${q ? queueHeader(route) : `<h1>${e(TITLES[route.kind])}</h1>`}
    <div id="content" aria-live="polite"><p class="muted">Loading…</p></div>
    <noscript><p class="error">The console needs JavaScript to load its data.</p></noscript>
  </main>
  <script type="module" src="/console/assets/js/main.js"></script>`,
  );
}

function crumbs(route: PageRoute): string {
  if (!route.queue) return '';
  const base = `/console/queues/${encodeURIComponent(route.queue)}`;
  const parts = [`<a href="/console/queues">Queues</a>`, `<a href="${e(base)}">${e(route.queue)}</a>`];
  if (route.kind === 'messages' || route.kind === 'message') parts.push(`<a href="${e(base)}/messages">Messages</a>`);
  if (route.kind === 'redrive') parts.push('Redrive');
  if (route.kind === 'message') parts.push(e(route.messageId!));
  return `<nav class="crumbs" aria-label="Breadcrumb">${parts.join('<span aria-hidden="true">/</span>')}</nav>`;
}

function queueHeader(route: PageRoute): string {
  const base = `/console/queues/${encodeURIComponent(route.queue!)}`;
  const tab = (kind: PageKind, href: string, label: string, id = '') =>
    `<a ${id}href="${e(href)}"${route.kind === kind || (kind === 'messages' && route.kind === 'message') ? ' aria-current="page"' : ''}>${label}</a>`;
  return `<header class="queue-head">
      <h1>${e(route.kind === 'message' ? `Message ${route.messageId}` : route.queue!)} <span id="queue-badges"></span></h1>
      <nav class="tabs" aria-label="Queue">
        ${tab('queue', base, 'Overview')}${tab('messages', `${base}/messages`, 'Messages')}${tab('redrive', `${base}/redrive`, 'Redrive', 'id="redrive-tab" ')}
      </nav>
    </header>`;
}

/** The sign-in form; after a failure it keeps the access key id typed (never the secret), so only the secret is typed again. */
export function renderSignIn(message: string | undefined, next: string, accessKeyId = ''): string {
  return layout(
    'Sign in',
    undefined,
    true,
    `
  <main class="sign-in">
    <form method="post" action="/console/sign-in" class="card">
      <h1>Sign in to Redrive</h1>
      <p class="muted">Use an access key from the server's credentials file.</p>
      ${message ? `<p class="error" role="alert">${e(message)}</p>` : ''}
      <input type="hidden" name="next" value="${e(next)}">
      <label>Access key id <input name="accessKeyId" autocomplete="username" required${accessKeyId ? ` value="${e(accessKeyId)}"` : ' autofocus'}></label>
      <label>Secret access key <input name="secretAccessKey" type="password" autocomplete="current-password" required${accessKeyId ? ' autofocus' : ''}></label>
      <button type="submit" class="primary">Sign in</button>
    </form>
  </main>`,
  );
}

export function renderNotFound(session: Session | undefined, signInRequired: boolean): string {
  return layout(
    'Not found',
    session,
    signInRequired,
    `
  <main><h1>Not found</h1><p>There is no console page at this address. <a href="/console/queues">All queues</a></p></main>`,
  );
}

function layout(title: string, session: Session | undefined, signInRequired: boolean, body: string): string {
  const account = session
    ? `<span class="account" title="Account">${e(session.accountId)}${session.accessKeyId ? ` · ${e(session.accessKeyId)}` : ''}</span>` +
      (signInRequired
        ? `<form method="post" action="/console/sign-out"><input type="hidden" name="csrf" value="${e(session.csrfToken)}"><button type="submit" class="link">Sign out</button></form>`
        : '<span class="badge neutral" title="Started without --credentials">open, no sign-in</span>')
    : '';
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  ${session ? `<meta name="redrive-csrf" content="${e(session.csrfToken)}">` : ''}
  <title>${e(title)} · Redrive</title>
  <link rel="stylesheet" href="/console/assets/console.css">
  <link rel="icon" href="/console/assets/favicon.svg" type="image/svg+xml">
</head>
<body>
  <header class="top">
    <a class="brand" href="/console/queues"><img src="/console/assets/favicon.svg" alt="" width="20" height="20"> Redrive</a>
    ${session ? '<nav class="main-nav"><a href="/console/queues">Queues</a><a href="/console/create-queue">Create queue</a><a href="/console/connections">Connections</a><a href="/console/exchanges">Exchanges</a></nav>' : ''}
    <div class="who">${account}</div>
  </header>${body}
</body>
</html>
`;
}

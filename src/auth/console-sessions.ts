import { createHmac, randomBytes } from 'node:crypto';
import { DEFAULT_SESSIONS_PER_ACCOUNT } from '../engine/queues/quotas.js';

/** A browser using the console: signed in (held in server memory; a restart signs everyone out), or an open console's (held nowhere, see Sessions). */
export interface Session {
  id: string;
  accountId: string;
  /** The access key the session signed in with; absent when the console is open. */
  accessKeyId?: string;
  /** Sent back by the page on every POST (header `x-redrive-csrf` or form field `csrf`). */
  csrfToken: string;
  expiresAt: number;
}

export const SESSION_MS = 8 * 3600_000;
const SESSION_COOKIE = 'redrive_console';
/** Signed-in sessions kept at once, all accounts together. */
const MAX_SESSIONS = 10_000;

/**
 * The console's sessions. Signed-in sessions (with --credentials) are kept in a table
 * bounded by `maxSessions`, and each account holds at most `perAccount` of them: a new
 * sign-in past that signs out the same account's oldest session, never another account's,
 * so however often one account signs in, the others stay signed in. With the table full,
 * a sign-in of an account that holds none is refused (`create` returns undefined). An open
 * console (no credentials) keeps nothing: its session is the random id in the browser's
 * cookie, and its CSRF token is an HMAC of that id under a key of this process, so a page
 * view costs no memory and a flood of cookie-less GETs fills no table.
 */
export class Sessions {
  /** In creation order, which is expiry order since every session lives SESSION_MS. */
  private readonly byId = new Map<string, Session>();
  /** The same sessions per account, each in creation order. */
  private readonly byAccount = new Map<string, Map<string, Session>>();
  private readonly openKey = randomBytes(32);

  constructor(
    private readonly maxSessions = MAX_SESSIONS,
    private readonly perAccount = DEFAULT_SESSIONS_PER_ACCOUNT,
  ) {}

  get size(): number {
    return this.byId.size;
  }

  /** A new signed-in session, or undefined when the table is full of other accounts' sessions. */
  create(accountId: string, accessKeyId: string, now = Date.now()): Session | undefined {
    this.sweep(now);
    let mine = this.byAccount.get(accountId);
    if (mine && (mine.size >= this.perAccount || this.byId.size >= this.maxSessions))
      this.delete(mine.keys().next().value!);
    else if (this.byId.size >= this.maxSessions) return undefined;
    const session: Session = { id: token(), accountId, accessKeyId, csrfToken: token(), expiresAt: now + SESSION_MS };
    this.byId.set(session.id, session);
    mine = this.byAccount.get(accountId);
    if (mine) mine.set(session.id, session);
    else this.byAccount.set(accountId, new Map([[session.id, session]]));
    return session;
  }

  get(id: string | undefined, now = Date.now()): Session | undefined {
    if (!id) return undefined;
    const session = this.byId.get(id);
    if (session && session.expiresAt <= now) {
      this.delete(id);
      return undefined;
    }
    return session;
  }

  /**
   * The open console's session of a cookie's id (none for an id this server could not
   * have made), or a new one, whose id the page sets as its cookie, without an id.
   */
  open(accountId: string, id?: string, now = Date.now()): Session | undefined {
    if (id !== undefined && !/^[\w-]{43}$/.test(id)) return undefined;
    const sessionId = id ?? token();
    const csrfToken = createHmac('sha256', this.openKey).update(sessionId).digest('base64url');
    return { id: sessionId, accountId, csrfToken, expiresAt: now + SESSION_MS };
  }

  delete(id: string): void {
    const session = this.byId.get(id);
    if (!session) return;
    this.byId.delete(id);
    const mine = this.byAccount.get(session.accountId)!;
    mine.delete(id);
    if (mine.size === 0) this.byAccount.delete(session.accountId);
  }

  /** Expired sessions are at the front: each call drops those and stops at the first live one. */
  private sweep(now: number): void {
    for (const [id, s] of this.byId) {
      if (s.expiresAt > now) return;
      this.delete(id);
    }
  }
}

function token(): string {
  return randomBytes(32).toString('base64url');
}

/** The session id in a Cookie header, if any. */
export function sessionIdOf(cookieHeader: string | undefined): string | undefined {
  for (const part of (cookieHeader ?? '').split(';')) {
    const [name, value] = part.trim().split('=', 2);
    if (name === SESSION_COOKIE && value) return value;
  }
  return undefined;
}

export function sessionCookie(session: Session, now = Date.now()): string {
  const maxAge = Math.max(0, Math.ceil((session.expiresAt - now) / 1000));
  return `${SESSION_COOKIE}=${session.id}; Path=/console; HttpOnly; SameSite=Strict; Max-Age=${maxAge}`;
}

export const clearedCookie = `${SESSION_COOKIE}=; Path=/console; HttpOnly; SameSite=Strict; Max-Age=0`;

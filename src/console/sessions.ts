import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A signed-in browser. Held in server memory only: a restart signs everyone out. */
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
export const SESSION_COOKIE = 'redrive_console';

export class Sessions {
  private readonly byId = new Map<string, Session>();

  create(accountId: string, accessKeyId: string | undefined, now = Date.now()): Session {
    this.sweep(now);
    const session: Session = { id: token(), accountId, accessKeyId, csrfToken: token(), expiresAt: now + SESSION_MS };
    this.byId.set(session.id, session);
    return session;
  }

  get(id: string | undefined, now = Date.now()): Session | undefined {
    if (!id) return undefined;
    const session = this.byId.get(id);
    if (session && session.expiresAt <= now) {
      this.byId.delete(id);
      return undefined;
    }
    return session;
  }

  delete(id: string): void {
    this.byId.delete(id);
  }

  /** Expired sessions go when a new one is made, so the map never outgrows the live ones by much. */
  private sweep(now: number): void {
    for (const [id, s] of this.byId) if (s.expiresAt <= now) this.byId.delete(id);
  }
}

function token(): string {
  return randomBytes(32).toString('base64url');
}

/** Compares two secrets in time that depends on neither (both are hashed to the same length first). */
export function sameSecret(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
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

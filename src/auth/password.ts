import { createHash, timingSafeEqual } from 'node:crypto';
import type { Credential } from './credentials.js';

/** A user name and password checked: the account they act as, or undefined. */
export type Authenticate = (user: string, password: string, remoteAddress: string | undefined) => string | undefined;

const LOOPBACK = /^(127\.|::1$|::ffff:127\.)/;
// Compared against when a key is unknown, so an unknown key costs what a wrong secret does.
const DUMMY_SECRET = 'redrive-no-such-key';

/**
 * The user name and password sign-in of AMQP's PLAIN, the management API's basic auth and
 * the console's sign-in form.
 * With credentials, an access key id and its secret, as the user name and password, act as
 * the key's account. Without, RabbitMQ's default applies: guest/guest, from a loopback
 * address only, acting as the default account.
 */
export function authenticator(opts: {
  credentials?: ReadonlyMap<string, Credential>;
  accountId: string;
}): Authenticate {
  return (user, password, remote) => {
    if (opts.credentials) {
      const c = opts.credentials.get(user);
      return sameSecret(password, c?.secretAccessKey ?? DUMMY_SECRET) && c ? c.accountId : undefined;
    }
    return user === 'guest' && password === 'guest' && remote !== undefined && LOOPBACK.test(remote)
      ? opts.accountId
      : undefined;
  };
}

/** Compares two secrets in time that depends on neither (both are hashed to the same length first). */
export function sameSecret(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

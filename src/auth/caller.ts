import type { Credentials } from './credentials.js';
import {
  accessKeyOf,
  authErrors,
  checkSignature,
  readSignature,
  Throttled,
  verifySignature,
  type SignedRequest,
} from './sigv4.js';
import { retryAfterSeconds, type AuthThrottle } from './throttle.js';

/**
 * The caller's account. With credentials configured, every SQS request must carry a valid
 * SigV4 signature by one of them. Without, Redrive follows the convention of local SQS
 * emulators that multi-account tests rely on: an access key id of exactly 12 digits names
 * the account, and any other key means the default account.
 */
export function callerAccount(
  req: SignedRequest,
  credentials: Credentials | undefined,
  defaultAccount: string,
  now: number,
  guard?: Guard,
): string {
  if (!credentials) {
    const key = accessKeyOf(req);
    return key !== undefined && /^\d{12}$/.test(key) ? key : defaultAccount;
  }
  const signature = readSignature(req);
  if (!signature) throw authErrors.missing();
  checkSignature(req, signature, now);
  // Only a check of the secret counts as a guess, and only it is held back: a malformed or
  // stale signature reveals nothing about the secret.
  const { accessKeyId } = signature;
  const wait = guard?.throttle.wait(guard.client, accessKeyId) ?? 0;
  if (wait > 0) throw authErrors.throttled(retryAfterSeconds(wait));
  const credential = credentials.get(accessKeyId);
  try {
    if (!credential) throw authErrors.unknownKey();
    verifySignature(req, signature, credential.secretAccessKey);
  } catch (e) {
    guard?.throttle.failed(guard.client, accessKeyId);
    throw e;
  }
  guard?.throttle.succeeded(guard.client, accessKeyId);
  return credential.accountId;
}

/** The refusal of `callerAccount`'s error, with Retry-After when it is a throttle's. */
export function withRetryAfter<R extends { headers: Record<string, string> }>(e: unknown, response: R): R {
  if (e instanceof Throttled) response.headers['retry-after'] = String(e.retryAfterSeconds);
  return response;
}

/** Who is asking, for the throttle of failed authentication (throttle.ts). */
export interface Guard {
  throttle: AuthThrottle;
  /** The client's address (src/server/client-address.ts). */
  client: string;
}

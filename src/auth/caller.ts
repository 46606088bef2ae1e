import type { Credentials } from './credentials.js';
import {
  accessKeyOf,
  authErrors,
  checkSignature,
  readSignature,
  stringToSignOf,
  Throttled,
  verifyStringToSign,
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
  return checkSecret(signature, () => stringToSignOf(req, signature), credentials, guard);
}

/** What a signed request claims, for a check of its secret elsewhere (the owner thread of `--threads N`). */
export interface SignedClaim {
  accessKeyId: string;
  scope: string;
  signature: string;
  stringToSign: string;
}

/** The claim of a signed request, after every check that needs no secret (signed-claim hand-off). */
export function claimOf(req: SignedRequest, now: number): SignedClaim {
  const signature = readSignature(req);
  if (!signature) throw authErrors.missing();
  checkSignature(req, signature, now);
  const { accessKeyId, scope } = signature;
  return { accessKeyId, scope, signature: signature.signature, stringToSign: stringToSignOf(req, signature) };
}

/**
 * The secret's check, under the throttle: the account of the key that signed, or the
 * refusal. Only a check of the secret counts as a guess, and only it is held back: a
 * malformed or stale signature reveals nothing about the secret. The wait, the check and
 * the report run in one turn, so parallel guesses are counted one after the other.
 */
export function checkSecret(
  claim: Pick<SignedClaim, 'accessKeyId' | 'scope' | 'signature'>,
  stringToSign: () => string,
  credentials: Credentials,
  guard?: Guard,
): string {
  const { accessKeyId } = claim;
  const wait = guard?.throttle.wait(guard.client, accessKeyId) ?? 0;
  if (wait > 0) throw authErrors.throttled(retryAfterSeconds(wait));
  const credential = credentials.get(accessKeyId);
  try {
    if (!credential) throw authErrors.unknownKey();
    verifyStringToSign(stringToSign(), claim, credential.secretAccessKey);
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

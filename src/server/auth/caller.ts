import { readFileSync } from 'node:fs';
import type { WireRequest, WireResponse } from '../../protocols/wire.js';
import { retryAfterSeconds, type AuthThrottle } from '../../protocols/auth-throttle.js';
import type { Credential, Credentials } from '../../protocols/credentials.js';
import {
  accessKeyOf,
  authErrors,
  checkSignature,
  readSignature,
  stringToSignOf,
  Throttled,
  verifyStringToSign,
} from './sigv4.js';

export type { Credential, Credentials };

/**
 * The caller's account. With credentials configured, every SQS request must carry a valid
 * SigV4 signature by one of them. Without, Redrive follows the convention of local SQS
 * emulators that multi-account tests rely on: an access key id of exactly 12 digits names
 * the account, and any other key means the default account.
 */
export function callerAccount(
  req: WireRequest,
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
export function claimOf(req: WireRequest, now: number): SignedClaim {
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
export function withRetryAfter(e: unknown, response: WireResponse): WireResponse {
  if (e instanceof Throttled) response.headers['retry-after'] = String(e.retryAfterSeconds);
  return response;
}

/** Who is asking, for the throttle of failed authentication (auth-throttle.ts). */
export interface Guard {
  throttle: AuthThrottle;
  /** The client's address (client-address.ts). */
  client: string;
}

/**
 * Reads `{"<access key id>": {"secretAccessKey": "...", "accountId": "<12 digits>"}, ...}`;
 * the caller names the file in its error (start-up.ts).
 */
export function loadCredentials(path: string): Credentials {
  const raw = JSON.parse(readFileSync(path, 'utf8')) as unknown;
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new Error('expected an object of access key ids');
  const credentials: Credentials = new Map();
  for (const [key, value] of Object.entries(raw)) {
    const c = value as Partial<Credential> | null;
    if (key === '') throw new Error('an access key id is empty: name each key as its clients send it');
    if (RESERVED_KEY_IDS.has(key))
      throw new Error(
        `access key id "${key}" is a reserved name of JavaScript objects, not a key id: rename the entry`,
      );
    if (typeof c?.secretAccessKey !== 'string' || typeof c.accountId !== 'string' || !/^\d{12}$/.test(c.accountId)) {
      throw new Error(`${key} needs a secretAccessKey and a 12-digit accountId`);
    }
    if (c.secretAccessKey === '')
      throw new Error(
        `${key} has an empty secretAccessKey: anyone who knows the key id could sign as it; give it a secret`,
      );
    credentials.set(key, { secretAccessKey: c.secretAccessKey, accountId: c.accountId });
  }
  return credentials;
}

/** Names that are no access key and that a plain object would resolve to a prototype member. */
const RESERVED_KEY_IDS = new Set(['__proto__', 'constructor', 'prototype']);

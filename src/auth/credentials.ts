import { readFileSync } from 'node:fs';

/**
 * The credentials a server accepts (`--credentials`): every interface that checks a secret
 * reads them (SigV4 in caller.ts, AMQP's PLAIN and the management API's basic auth in
 * password.ts, the console's sign-in).
 */
export interface Credential {
  secretAccessKey: string;
  /** The account a caller with this key acts as. */
  accountId: string;
}

/** Access key id → credential. */
export type Credentials = Map<string, Credential>;

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

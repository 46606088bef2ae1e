/**
 * The credentials a server accepts: every interface that checks a secret reads them
 * (SigV4 in src/server/auth, the console's sign-in, the management API). They live in
 * src/protocols, beside the throttle those checks share, so that the console need not
 * import the server that mounts it.
 */
export interface Credential {
  secretAccessKey: string;
  /** The account a caller with this key acts as. */
  accountId: string;
}

/** Access key id → credential. */
export type Credentials = Map<string, Credential>;

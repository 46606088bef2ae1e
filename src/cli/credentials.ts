import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { loadSharedConfigFiles } from '@smithy/core/config';
import { SignatureV4 } from '@smithy/signature-v4';
import { CliError } from './cli-error.js';

/**
 * Credentials and region as every AWS tool finds them: flags, then AWS_* environment
 * variables, then the shared config and credentials files (AWS_CONFIG_FILE,
 * AWS_SHARED_CREDENTIALS_FILE, ~/.aws). The server maps the access key to an account.
 */
export interface Identity {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface ConnectionOptions {
  profile?: string;
  region?: string;
}

type Source = string | ArrayBuffer | ArrayBufferView;
const bytes = (d: Source): Buffer =>
  typeof d === 'string'
    ? Buffer.from(d, 'utf8')
    : ArrayBuffer.isView(d)
      ? Buffer.from(d.buffer, d.byteOffset, d.byteLength)
      : Buffer.from(d);

/** The hash constructor @smithy/signature-v4 asks for, on node:crypto. */
export class Sha256 {
  private hash: Hash | Hmac;
  constructor(private readonly secret?: Source) {
    this.hash = this.fresh();
  }
  private fresh(): Hash | Hmac {
    return this.secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(this.secret));
  }
  update(data: Source): void {
    this.hash.update(bytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
  reset(): void {
    this.hash = this.fresh();
  }
}

/**
 * The SDK's chain warns on the console, in nine lines, when a profile is named while
 * AWS_ACCESS_KEY_ID is set too; the CLI documents that the profile wins, so it stays quiet.
 */
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

/** The profile named by --profile or AWS_PROFILE; undefined means `default`, quietly. */
const namedProfile = (o: ConnectionOptions) => o.profile ?? process.env.AWS_PROFILE;

/**
 * The credentials of the standard chain, or undefined when there are none (an open
 * server takes unsigned requests). A profile asked for by name that gives none is an error.
 */
export async function findCredentials(o: ConnectionOptions): Promise<Identity | undefined> {
  // Redrive's keys come from its --credentials file, never from EC2 instance roles: skip the
  // instance metadata probe, which costs a second or more off EC2 (unless the user chose).
  process.env.AWS_EC2_METADATA_DISABLED ??= 'true';
  try {
    const c = await defaultProvider({ profile: o.profile, logger: quiet })();
    return { accessKeyId: c.accessKeyId, secretAccessKey: c.secretAccessKey, sessionToken: c.sessionToken };
  } catch (e) {
    const profile = namedProfile(o);
    if (profile === undefined) return undefined;
    throw new CliError(
      `profile "${profile}" gives no credentials: add aws_access_key_id and aws_secret_access_key to [${profile}] in ${credentialsFile()}` +
        ` (or [profile ${profile}] in ${configFile()})`,
      { code: 'CredentialsNotFound', detail: (e as Error).message },
    );
  }
}

const credentialsFile = () => process.env.AWS_SHARED_CREDENTIALS_FILE ?? join(homedir(), '.aws', 'credentials');
const configFile = () => process.env.AWS_CONFIG_FILE ?? join(homedir(), '.aws', 'config');

/** --region, AWS_REGION, AWS_DEFAULT_REGION, the profile's `region` in the config file; else undefined. */
export async function findRegion(o: ConnectionOptions): Promise<string | undefined> {
  const fromEnv = o.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION;
  if (fromEnv) return fromEnv;
  // The SDK's own reader of the shared files (AWS_CONFIG_FILE or ~/.aws/config), which
  // knows their `[profile name]` sections and comments; a missing file reads as empty.
  const { configFile } = await loadSharedConfigFiles();
  return configFile[namedProfile(o) ?? 'default']?.region;
}

/** Signs a JSON-protocol request for service `sqs`. */
export function signer(identity: Identity, region: string): SignatureV4 {
  return new SignatureV4({ service: 'sqs', region, credentials: identity, sha256: Sha256, applyChecksum: true });
}

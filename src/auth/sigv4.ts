import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { isRegionName, regionOfHost } from '../engine/kernel/addressing.js';
import { SqsError } from '../engine/kernel/errors.js';

/**
 * AWS Signature Version 4, as SQS checks it: in the Authorization header or in a presigned
 * query string. The canonical request is rebuilt from the raw request, so anything a client
 * signed (path, query, signed headers, body) cannot change without the signature failing.
 */
const ALGORITHM = 'AWS4-HMAC-SHA256';
const MAX_SKEW_MS = 15 * 60_000;
const MAX_PRESIGNED_SECONDS = 7 * 24 * 3600;

/**
 * What a signature covers of an HTTP request, as the HTTP front hands it to the protocols
 * (their WireRequest is one): declared here so that checking a signature needs no protocol.
 */
export interface SignedRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  query: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface Signature {
  accessKeyId: string;
  /** `<yyyymmdd>/<region>/<service>/aws4_request` */
  scope: string;
  signedHeaders: string[];
  signature: string;
  amzDate: string;
  /** Seconds a presigned URL stays valid; absent for the header form. */
  expires?: number;
}

// Not in SQS's model; the codes are AWS's common errors, the texts AWS's usual wording.
export const authErrors = {
  missing: () =>
    new SqsError(
      'MissingAuthenticationToken',
      'MissingAuthenticationToken',
      403,
      'Request is missing Authentication Token',
    ),
  incomplete: (what: string) => new SqsError('IncompleteSignature', 'IncompleteSignature', 400, what),
  unknownKey: () =>
    new SqsError(
      'InvalidClientTokenId',
      'InvalidClientTokenId',
      403,
      'The security token included in the request is invalid.',
    ),
  mismatch: () =>
    new SqsError(
      'SignatureDoesNotMatch',
      'SignatureDoesNotMatch',
      403,
      'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.',
    ),
  expired: () => new SqsError('RequestExpired', 'RequestExpired', 400, 'Request has expired.'),
  // The scope's texts are AWS's own, trailing space included.
  wrongService: () => mismatchBecause("Credential should be scoped to correct service: 'sqs'. "),
  wrongRegion: (region: string) => mismatchBecause(`Credential should be scoped to a valid region, not '${region}'. `),
  wrongDate: (scopeDate: string, amzDate: string) =>
    mismatchBecause(
      `Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '${scopeDate}' != '${amzDate.slice(0, 8)}', from '${amzDate}'. `,
    ),
  targetNotSigned: () =>
    new SqsError('IncompleteSignature', 'IncompleteSignature', 400, 'The X-Amz-Target header must be signed.'),
  /** Too many failed attempts from this client or on this key (throttle.ts); SQS's own throttling error, as HTTP 429. */
  throttled: (seconds: number) => new Throttled(seconds),
};

/** Answered with a Retry-After header of `retryAfterSeconds`. */
export class Throttled extends SqsError {
  constructor(readonly retryAfterSeconds: number) {
    super(
      'RequestThrottled',
      'RequestThrottled',
      429,
      `Too many failed authentication attempts; retry after ${retryAfterSeconds} seconds.`,
    );
  }
}

function mismatchBecause(message: string): SqsError {
  return new SqsError('SignatureDoesNotMatch', 'SignatureDoesNotMatch', 403, message);
}

/** The signature a request carries, if any; throws IncompleteSignature when it is malformed. */
export function readSignature(req: SignedRequest): Signature | undefined {
  const auth = req.headers.authorization;
  if (typeof auth === 'string' && auth.startsWith(`${ALGORITHM} `)) {
    const fields = new Map(
      auth
        .slice(ALGORITHM.length + 1)
        .split(',')
        .map((f) => f.trim().split('=', 2) as [string, string]),
    );
    const [cred, signedHeaders, signature] = [
      fields.get('Credential'),
      fields.get('SignedHeaders'),
      fields.get('Signature'),
    ];
    const amzDate = header(req, 'x-amz-date');
    if (!cred || !signedHeaders || !signature || !amzDate) {
      throw authErrors.incomplete(
        'Authorization header requires Credential, SignedHeaders and Signature, and the request an X-Amz-Date header.',
      );
    }
    return { ...credential(cred), signedHeaders: signedHeaders.split(';'), signature, amzDate };
  }
  const params = new URLSearchParams(req.query);
  if (params.get('X-Amz-Algorithm') !== ALGORITHM) return undefined;
  const [cred, signedHeaders, signature, amzDate, expires] = [
    'Credential',
    'SignedHeaders',
    'Signature',
    'Date',
    'Expires',
  ].map((n) => params.get(`X-Amz-${n}`));
  if (!cred || !signedHeaders || !signature || !amzDate || !expires || !/^\d+$/.test(expires)) {
    throw authErrors.incomplete(
      'A presigned URL requires X-Amz-Credential, X-Amz-Date, X-Amz-Expires, X-Amz-SignedHeaders and X-Amz-Signature.',
    );
  }
  return { ...credential(cred), signedHeaders: signedHeaders.split(';'), signature, amzDate, expires: Number(expires) };
}

/** A presigned URL's X-Amz-Credential; most requests have no query, and then nothing is parsed. */
function queryCredential(req: SignedRequest): string | null {
  return req.query === '' ? null : new URLSearchParams(req.query).get('X-Amz-Credential');
}

/** The access key id a request names, signed or not (for the unsigned account convention). */
export function accessKeyOf(req: SignedRequest): string | undefined {
  const auth = req.headers.authorization;
  const cred =
    (typeof auth === 'string' && /Credential=([^/,\s]+)/.exec(auth)?.[1]) || queryCredential(req)?.split('/')[0];
  return cred || undefined;
}

/**
 * The region of the credential scope a request names (`<key>/<date>/<region>/sqs/aws4_request`),
 * signed or not, if it is a region name: the SDKs and the CLI sign with the client's region.
 */
export function scopeRegionOf(req: SignedRequest): string | undefined {
  const auth = req.headers.authorization;
  const cred = (typeof auth === 'string' && /Credential=([^,\s]+)/.exec(auth)?.[1]) || queryCredential(req);
  const region = cred ? cred.split('/')[2] : undefined;
  return region && isRegionName(region) ? region : undefined;
}

/**
 * Everything about a signature that needs no secret, as SQS checks it: the credential
 * scope (`<date>/<region>/sqs/aws4_request`, its date X-Amz-Date's, its region well-formed
 * and the one the host names, if any), the time (15 minutes either way, or a presigned
 * URL's X-Amz-Expires), and that the action header, when present, is signed: otherwise a
 * presigned URL or a captured request could be replayed as another action.
 */
export function checkSignature(req: SignedRequest, sig: Signature, now: number): void {
  const signedAt = parseAmzDate(sig.amzDate);
  if (signedAt === undefined) throw authErrors.incomplete(`Invalid X-Amz-Date ${sig.amzDate}.`);
  const [date, region, service] = sig.scope.split('/') as [string, string, string];
  if (date !== sig.amzDate.slice(0, 8)) throw authErrors.wrongDate(date, sig.amzDate);
  if (service !== 'sqs') throw authErrors.wrongService();
  const host = header(req, 'host')?.toLowerCase();
  const hostRegion = host === undefined ? undefined : regionOfHost(host);
  if (!isRegionName(region) || (hostRegion !== undefined && hostRegion !== region))
    throw authErrors.wrongRegion(region);
  if (sig.expires !== undefined) {
    if (sig.expires > MAX_PRESIGNED_SECONDS || now > signedAt + sig.expires * 1000 || signedAt > now + MAX_SKEW_MS)
      throw authErrors.expired();
  } else if (Math.abs(now - signedAt) > MAX_SKEW_MS) {
    throw authErrors.expired();
  }
  if (!sig.signedHeaders.includes('host')) throw authErrors.incomplete('The host header must be signed.');
  if (header(req, 'x-amz-target') !== undefined && !sig.signedHeaders.includes('x-amz-target'))
    throw authErrors.targetNotSigned();
}

/** What the signature signs: everything of the request it covers, hashed (no secret needed). */
export function stringToSignOf(req: SignedRequest, sig: Signature): string {
  return [ALGORITHM, sig.amzDate, sig.scope, sha256(canonicalRequest(req, sig))].join('\n');
}

/** The signature itself, with the key's secret (`checkSignature` first): whether it signed `stringToSign`. */
export function verifyStringToSign(
  stringToSign: string,
  sig: Pick<Signature, 'scope' | 'signature'>,
  secretAccessKey: string,
): void {
  const [date, region, service] = sig.scope.split('/') as [string, string, string];
  let key = hmac(`AWS4${secretAccessKey}`, date);
  for (const part of [region, service, 'aws4_request']) key = hmac(key, part);
  const expected = Buffer.from(createHmac('sha256', key).update(stringToSign).digest('hex'));
  const given = Buffer.from(sig.signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw authErrors.mismatch();
}

function canonicalRequest(req: SignedRequest, sig: Signature): string {
  const headers = sig.signedHeaders
    .map((name) => `${name}:${(header(req, name) ?? '').trim().replace(/\s+/g, ' ')}\n`)
    .join('');
  // The raw path is encoded once more, as non-S3 SigV4 requires.
  const path = encode(req.path).replace(/%2F/g, '/');
  return [req.method, path, canonicalQuery(req.query), headers, sig.signedHeaders.join(';'), sha256(req.body)].join(
    '\n',
  );
}

/** Every parameter but the signature, decoded, RFC 3986-encoded, sorted by name then value. */
function canonicalQuery(query: string): string {
  return query
    .split('&')
    .filter((p) => p && !p.startsWith('X-Amz-Signature='))
    .map((p) => {
      const eq = p.indexOf('=');
      const [k, v] = eq < 0 ? [p, ''] : [p.slice(0, eq), p.slice(eq + 1)];
      return [encode(decode(k)), encode(decode(v))] as const;
    })
    .sort(([ak, av], [bk, bv]) => (ak < bk ? -1 : ak > bk ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
}

function credential(value: string): Pick<Signature, 'accessKeyId' | 'scope'> {
  const parts = value.split('/');
  if (parts.length !== 5 || parts[4] !== 'aws4_request' || !/^\d{8}$/.test(parts[1]!)) {
    throw authErrors.incomplete(`Credential should be scoped to a valid region and service: ${value}.`);
  }
  return { accessKeyId: parts[0]!, scope: parts.slice(1).join('/') };
}

function header(req: SignedRequest, name: string): string | undefined {
  // Signed header names come from the client: `__proto__` must not reach the prototype.
  const v = Object.hasOwn(req.headers, name) ? req.headers[name] : undefined;
  return Array.isArray(v) ? v.join(',') : v;
}

function parseAmzDate(s: string): number | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(s);
  return m ? Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!) : undefined;
}

/** RFC 3986: everything but unreserved characters percent-encoded. */
function encode(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

function hmac(key: string | Buffer, data: string): Buffer {
  return createHmac('sha256', key).update(data).digest();
}

/**
 * Requests signed by the AWS SDK's own SigV4 signer (@smithy/signature-v4) and sent as they
 * are with node:http, so a test can change what a client cannot: the Host header, a
 * header left out of the signature, the credential scope, X-Forwarded-For.
 */
import { request as httpRequest } from 'node:http';
import { SignatureV4 } from '@smithy/signature-v4';
import { Sha256 } from '../../src/cli/credentials.js';

export interface Keys {
  accessKeyId: string;
  secretAccessKey: string;
}

export interface RawRequest {
  method: string;
  path: string;
  query?: Record<string, string | string[] | null>;
  headers: Record<string, string>;
  body?: string;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

export function signer(keys: Keys, region = 'us-east-1', service = 'sqs'): SignatureV4 {
  return new SignatureV4({ service, region, credentials: keys, sha256: Sha256, applyChecksum: false });
}

/** A JSON-protocol request for `action`, ready to sign; `host` is what the Host header says. */
export function jsonRequest(
  host: string,
  action: string,
  body = '{}',
): RawRequest & { hostname: string; protocol: string } {
  return {
    method: 'POST',
    protocol: 'http:',
    hostname: host.split(':')[0]!,
    path: '/',
    headers: { host, 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': `AmazonSQS.${action}` },
    body,
  };
}

/** Sends `req` to the server at `url` (whatever its Host header says), with extra unsigned headers. */
export function send(url: string, req: RawRequest, extra: Record<string, string> = {}): Promise<RawResponse> {
  const target = new URL(url);
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(req.query ?? {}))
    for (const one of Array.isArray(v) ? v : [v ?? '']) params.append(k, one);
  const query = params.toString();
  return new Promise((resolve, reject) => {
    const r = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: query ? `${req.path}?${query}` : req.path,
        headers: { ...req.headers, ...extra },
        agent: false,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
      },
    );
    r.on('error', reject);
    r.end(req.body ?? '');
  });
}
